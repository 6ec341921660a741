package work_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestSubscribeNotices: one content-free notice per terminal transition of
// the owner's visible Work, after the observer saw it; none for another
// owner's Work or for detached Work.
func TestSubscribeNotices(t *testing.T) {
	h := newHarness(t)
	o, other := work.NewOwner("coord"), work.NewOwner("other")
	sub, err := h.s.Subscribe(t.Context(), o, 0)
	if err != nil {
		t.Fatal(err)
	}
	r1, c1 := h.running(o, agent)
	r2, c2 := h.running(o, fn)
	r3, c3 := h.running(o, agent)
	r4, c4 := h.running(o, fn)
	_, c5 := h.running(other, fn)
	if _, err := h.s.Detach(t.Context(), o, r4.ID); err != nil {
		t.Fatal(err)
	}

	c1.complete("out " + canary)
	n := <-sub.C()
	if n.WorkID != r1.ID || n.Target != agent.Label || n.State != work.StateCompleted || !n.ResultAvailable || !n.Time.Equal(t0) {
		t.Fatalf("notice = %+v", n)
	}
	// The observer already has the terminal event.
	if evs := h.obs.events(r1.ID); evs[len(evs)-1].Type != observe.EventCompleted {
		t.Fatalf("notice ahead of the observer: %+v", evs)
	}
	c2.fail()
	if n := <-sub.C(); n.WorkID != r2.ID || n.State != work.StateFailed || n.ResultAvailable {
		t.Fatalf("notice = %+v", n)
	}
	c4.complete("detached")
	c5.complete("other owner")
	h.obs.waitTerminal(r4.ID)
	if _, err := h.s.Cancel(t.Context(), o, r3.ID); err != nil {
		t.Fatal(err)
	}
	c3.returnCtxErr()
	if n := <-sub.C(); n.WorkID != r3.ID || n.State != work.StateCancelled {
		t.Fatalf("notice = %+v", n)
	}
	select {
	case n := <-sub.C():
		t.Fatalf("unexpected notice %+v", n)
	default:
	}
	if sub.Dropped() != 0 {
		t.Fatalf("dropped = %d", sub.Dropped())
	}
}

// TestSubscribeBounded: a full buffer drops and counts notices; the engine
// never waits for the reader.
func TestSubscribeBounded(t *testing.T) {
	h := newHarness(t)
	o := work.NewOwner("coord")
	sub, err := h.s.Subscribe(t.Context(), o, 1)
	if err != nil {
		t.Fatal(err)
	}
	var last work.Ref
	for range 3 {
		ref, c := h.running(o, fn)
		c.complete("x")
		h.obs.waitTerminal(ref.ID)
		// Result answers once settlement is fully announced (the notice
		// included).
		if _, _, err := h.s.Result(context.Background(), o, ref.ID, 0); err != nil {
			t.Fatal(err)
		}
		last = ref
	}
	if sub.Dropped() != 2 {
		t.Fatalf("dropped = %d, want 2", sub.Dropped())
	}
	if n := <-sub.C(); n.WorkID == last.ID {
		t.Fatalf("the buffer kept the newest notice, want the oldest")
	}
}

// TestSubscribeCloses: Release, Subscription.Close and Close close the
// channel; Subscribe after Close is ErrClosed; Release's cancellations
// bring no notice.
func TestSubscribeCloses(t *testing.T) {
	h := newHarness(t)
	o := work.NewOwner("coord")
	released, _ := h.s.Subscribe(t.Context(), o, 0)
	own, _ := h.s.Subscribe(t.Context(), o, 0)
	atClose, _ := h.s.Subscribe(t.Context(), work.NewOwner("late"), 0)
	ref, c := h.running(o, fn)
	own.Close()
	own.Close() // idempotent
	if _, ok := <-own.C(); ok {
		t.Fatal("Subscription.Close did not close the channel")
	}
	h.s.Release(t.Context(), o)
	c.returnCtxErr()
	h.obs.waitTerminal(ref.ID)
	if n, ok := <-released.C(); ok {
		t.Fatalf("Release: got %+v, want a closed channel", n)
	}
	if err := h.s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-atClose.C(); ok {
		t.Fatal("Close did not close the channel")
	}
	if _, err := h.s.Subscribe(t.Context(), o, 0); err == nil {
		t.Fatal("Subscribe after Close succeeded")
	} else {
		wantCode(t, err, "closed")
	}
	if _, err := h.s.Subscribe(t.Context(), work.Owner{}, 0); err == nil {
		t.Fatal("Subscribe with the zero owner succeeded")
	}
}

// TestSubscribeScopeEnd: a child's scope subscription closes when the
// child ends.
func TestSubscribeScopeEnd(t *testing.T) {
	h := newHarness(t)
	_, c := h.running(work.NewOwner("coord"), agent)
	sub, err := h.s.Subscribe(t.Context(), c.ex.Scope(), 0)
	if err != nil {
		t.Fatal(err)
	}
	gc := h.child()
	h.start(c.ex.Scope(), fn, gc)
	<-gc.started
	c.complete("done")
	gc.returnCtxErr()
	if n, ok := <-sub.C(); ok {
		t.Fatalf("got %+v, want the channel closed at the child's end", n)
	}
}

// TestScopeSubscriptionClosesWithoutWork: a Subscription on a child's
// scope that never started Work closes when the child returns, for a
// background and a foreground child, and subscribing to an ended scope
// fails with ErrScopeEnded.
func TestScopeSubscriptionClosesWithoutWork(t *testing.T) {
	s := work.New()
	defer s.Close(context.Background())
	o := work.NewOwner("coord")
	var scopes []work.Owner
	var closed chan struct{}
	subscribe := func(ctx context.Context) (string, error) {
		ex, _ := work.ExecutionFrom(ctx)
		scopes = append(scopes, ex.Scope())
		sub, err := s.Subscribe(ctx, ex.Scope(), 0)
		if err != nil {
			return "", err
		}
		go func() {
			for range sub.C() {
			}
			close(closed)
		}()
		return "ok", nil
	}
	for _, background := range []bool{true, false} {
		closed = make(chan struct{})
		spec := work.Spec{Owner: o, Target: fn, Run: subscribe}
		if background {
			if _, err := s.Start(context.Background(), spec); err != nil {
				t.Fatal(err)
			}
		} else if _, err := s.Call(context.Background(), spec); err != nil {
			t.Fatal(err)
		}
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Fatalf("background=%v: the scope's Subscription is still open after the child returned", background)
		}
	}
	for _, sc := range scopes {
		if _, err := s.Subscribe(t.Context(), sc, 0); !errors.Is(err, work.ErrScopeEnded) {
			t.Fatalf("Subscribe(ended scope) = %v", err)
		}
	}
}
