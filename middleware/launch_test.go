package middleware_test

import (
	"context"
	"sync"
	"testing"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestLaunchRetriedAfterLostReply: the model's tool call is retried with
// the same tool-call identity after the first reply was lost: it gets the
// same work.ref and nothing new starts. The same identity with another
// input is refused with the stable code conflict; a launch without an
// identity is never deduplicated.
func TestLaunchRetriedAfterLostReply(t *testing.T) {
	e := newEnv(t)
	g := e.gate("report", nil)
	s := e.prepare("coord", map[string]any{"research": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: g.run})})
	tl := tool(t, s, "research")
	ctx := middleware.WithCallID(context.Background(), "call_abc")
	in := `{"input":"go scheduler","run_in_background":true}`

	first := callCtx(t, ctx, tl, in)
	id := refID(t, first) // this reply is "lost"; the executor retries
	if again := callCtx(t, ctx, tl, in); again != first {
		t.Fatalf("retry = %s, want %s", again, first)
	}
	// The same input in another key order is the same input.
	if again := callCtx(t, ctx, tl, `{"run_in_background":true,"input":"go scheduler"}`); again != first {
		t.Fatalf("reordered retry = %s", again)
	}
	if code := errorCode(t, callCtx(t, ctx, tl, `{"input":"something else","run_in_background":true}`)); code != "conflict" {
		t.Fatalf("other input: code %q, want conflict", code)
	}
	if n := countQueued(e); n != 1 {
		t.Fatalf("%d Works started, want 1", n)
	}
	other := launch(t, s, "research", "go scheduler") // no identity
	if other == id {
		t.Fatal("a launch without identity was deduplicated")
	}
	// The retries' spans still name the Work.
	for _, c := range e.obs.Calls() {
		if c.Call.Kind == observe.ToolCallLaunch && c.Call.CallID == "call_abc" && c.End.Outcome == "ok" && c.End.WorkID != id {
			t.Fatalf("a retry reported work %s", c.End.WorkID)
		}
	}
}

// TestLaunchConcurrentSameIdentity: two launches racing with one
// identity start exactly one Work and both return its work.ref.
func TestLaunchConcurrentSameIdentity(t *testing.T) {
	e := newEnv(t)
	g := e.gate("report", nil)
	s := e.prepare("coord", map[string]any{"research": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: g.run})})
	tl := tool(t, s, "research")
	ctx := middleware.WithCallID(context.Background(), "call_same")
	outs := make([]string, 2)
	var wg sync.WaitGroup
	begin := make(chan struct{})
	for i := range outs {
		wg.Go(func() {
			<-begin
			outs[i], _ = tl.Call(ctx, `{"input":"x","run_in_background":true}`)
		})
	}
	close(begin)
	wg.Wait()
	if outs[0] != outs[1] {
		t.Fatalf("replies differ:\n%s\n%s", outs[0], outs[1])
	}
	refID(t, outs[0])
	if n := countQueued(e); n != 1 {
		t.Fatalf("%d Works started, want exactly 1", n)
	}
}

func countQueued(e *env) int {
	n := 0
	for _, ev := range e.obs.Events() {
		if ev.Type == observe.EventQueued {
			n++
		}
	}
	return n
}
