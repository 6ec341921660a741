package work_test

import (
	"context"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

type watcher struct {
	observe.NopObserver
	watched   observe.Watched
	unwatched int
}

func (w *watcher) Watch(s observe.Watched) func() {
	w.watched = s
	return func() { w.unwatched++ }
}

func TestWatcherWatchedOnceUnwatchedOnFirstClose(t *testing.T) {
	w := &watcher{}
	s := work.New(work.WithObserver(w))
	if w.watched != observe.Watched(s) {
		t.Fatal("Watch not called with the engine")
	}
	s.Close(context.Background())
	s.Close(context.Background())
	if w.unwatched != 1 {
		t.Fatalf("unwatch called %d times", w.unwatched)
	}
}

func TestNopObserver(t *testing.T) {
	ctx := context.Background()
	exec := context.WithValue(context.Background(), execKey{}, 1)
	var n observe.NopObserver
	c2, end2 := n.Begin(ctx, observe.ToolCall{})
	end2(observe.ToolCallEnd{})
	n.Event(ctx, observe.Event{})
	if c2 != ctx || n.Bind(ctx, exec, observe.Event{}) != exec {
		t.Fatal("NopObserver")
	}
}

// TestBindContextIsolated: the child's context carries what Bind returned
// and the Execution, but no value of the caller's context and not its
// cancellation.
func TestBindContextIsolated(t *testing.T) {
	type key struct{}
	b := &binder{}
	h := newHarness(t)
	s := work.New(work.WithObserver(b), work.WithClock(h.clk))
	defer s.Close(context.Background())
	caller, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "caller secret"))
	seen := make(chan context.Context, 1)
	release := make(chan struct{})
	ref, err := s.Start(caller, work.Spec{Owner: coord, Target: agent, Run: func(ctx context.Context) (string, error) {
		seen <- ctx
		<-release
		return "", nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	ctx := <-seen
	if ctx.Value(key{}) != nil {
		t.Fatal("caller value reached the child")
	}
	if ctx.Value(boundKey{}) != ref.ID {
		t.Fatal("Bind's context is not the child's")
	}
	if ctx.Err() != nil {
		t.Fatal("caller cancellation reached the child")
	}
	if b.caller.Value(key{}) != "caller secret" {
		t.Fatal("Bind did not get the caller context")
	}
	close(release)
}

type boundKey struct{}

type binder struct {
	observe.NopObserver
	caller context.Context
}

func (b *binder) Bind(caller, exec context.Context, e observe.Event) context.Context {
	b.caller = caller
	if e.Type != observe.EventQueued || e.WorkID == "" || e.Owner != "coord" {
		panic("Bind got a bad event")
	}
	return context.WithValue(exec, boundKey{}, e.WorkID)
}

func TestEngineNowUsesItsClock(t *testing.T) {
	h := newHarness(t)
	h.clk.Advance(1500)
	if got := boundary.Now(h.s); !got.Equal(t0.Add(1500)) {
		t.Fatalf("Now = %v", got)
	}
}

// execKey is a context key of the tests' own.
type execKey struct{}
