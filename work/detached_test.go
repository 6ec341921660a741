package work_test

import (
	"context"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// Detach only hides a Work from its owner's model-facing views:
// everything else about it stays with its owner.

// TestDetachedCountsAgainstOutstanding: detaching is no way around the
// outstanding limit; the Work counts until it is terminal.
func TestDetachedCountsAgainstOutstanding(t *testing.T) {
	h := newHarness(t, work.WithMaxOutstanding(2), work.WithMaxRunning(1))
	r1, c1 := h.running(coord, agent)
	r2 := h.start(coord, agent, h.child()) // queued
	for _, id := range []string{r1.ID, r2.ID} {
		if _, err := h.s.Detach(t.Context(), coord, id); err != nil {
			t.Fatal(err)
		}
	}
	h.refused(coord, observe.LimitOutstanding)
	c1.complete("")
	h.obs.waitTerminal(r1.ID)
	h.start(coord, agent, h.child()) // one slot of the limit is free again
	h.refused(coord, observe.LimitOutstanding)
}

// TestDetachedCancelledWhenScopeEnds: children each start as much Work as
// their scope may hold, detach all of it and return. The detached Work,
// queued or running, is cancelled as its child's scope ends, like visible
// Work of that scope, and the observer sees every terminal event.
func TestDetachedCancelledWhenScopeEnds(t *testing.T) {
	const children, each = 3, 4
	h := newHarness(t, work.WithMaxOutstanding(each), work.WithMaxRunning(2+children))
	var refs, grandRefs []work.Ref
	var kids []*child
	for range children {
		ref, c := h.running(coord, agent)
		refs, kids = append(refs, ref), append(kids, c)
	}
	untilCancelled := func(ctx context.Context) (string, error) { <-ctx.Done(); return "", ctx.Err() }
	for _, c := range kids {
		scope := c.ex.Scope()
		for range each {
			ref, err := h.s.Start(t.Context(), work.Spec{Owner: scope, Target: agent, Run: untilCancelled})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.s.Detach(t.Context(), scope, ref.ID); err != nil {
				t.Fatal(err)
			}
			grandRefs = append(grandRefs, ref)
		}
		h.refused(scope, observe.LimitOutstanding)
	}
	if c := census(h.s); c[work.StateRunning] != children+2 || c[work.StateQueued] != children*each-2 {
		t.Fatalf("census before the children end: %v", c)
	}
	for i, c := range kids {
		c.complete("")
		h.obs.waitTerminal(refs[i].ID)
	}
	// Each detached grandchild, queued or running, ends cancelled: only a
	// cancellation ends untilCancelled.
	for i, ref := range grandRefs {
		if ev := h.obs.waitTerminal(ref.ID); ev.To != work.StateCancelled {
			t.Fatalf("detached grandchild %d ended %+v", i, ev)
		}
	}
	if n := censusTotal(h.s); n != children {
		t.Fatalf("census after the children ended: %v", census(h.s))
	}
}

// TestReleaseAndCloseCancelDetached: Release of the owner and Close cancel
// detached Work, queued and running; each ends with a terminal event.
func TestReleaseAndCloseCancelDetached(t *testing.T) {
	for _, how := range []string{"release", "close"} {
		t.Run(how, func(t *testing.T) {
			h := newHarness(t, work.WithMaxRunning(1))
			rRef, rc := h.running(coord, agent)
			qRef := h.start(coord, agent, h.child())
			for _, id := range []string{rRef.ID, qRef.ID} {
				if _, err := h.s.Detach(t.Context(), coord, id); err != nil {
					t.Fatal(err)
				}
			}
			closed := make(chan error, 1)
			if how == "release" {
				h.s.Release(t.Context(), coord)
			} else {
				go func() { closed <- h.s.Close(context.Background()) }()
			}
			if ev := h.obs.waitTerminal(qRef.ID); ev.To != work.StateCancelled {
				t.Fatalf("queued detached Work: %+v", ev)
			}
			<-rc.ctx.Done()
			rc.returnCtxErr()
			if ev := h.obs.waitTerminal(rRef.ID); ev.To != work.StateCancelled {
				t.Fatalf("running detached Work: %+v", ev)
			}
			if how == "close" {
				if err := <-closed; err != nil {
					t.Fatal(err)
				}
			}
			if n := censusTotal(h.s); n != 0 {
				t.Fatalf("census holds %d", n)
			}
		})
	}
}

// TestDetachedInForegroundScope: Work a foreground child starts and
// detaches is cancelled when the foreground call returns.
func TestDetachedInForegroundScope(t *testing.T) {
	h := newHarness(t)
	g := h.child()
	var gRef work.Ref
	out, err := h.s.Call(t.Context(), work.Spec{Owner: coord, Target: agent, Run: func(ctx context.Context) (string, error) {
		ex, _ := work.ExecutionFrom(ctx)
		ref, err := h.s.Start(ctx, work.Spec{Owner: ex.Scope(), Target: agent, Run: g.run})
		if err != nil {
			return "", err
		}
		gRef = ref
		<-g.started
		if _, err := h.s.Detach(ctx, ex.Scope(), ref.ID); err != nil {
			return "", err
		}
		return "done", nil
	}})
	if err != nil || out != "done" {
		t.Fatalf("call = %q %v", out, err)
	}
	<-g.ctx.Done()
	g.returnCtxErr()
	if ev := h.obs.waitTerminal(gRef.ID); ev.To != work.StateCancelled {
		t.Fatalf("detached Work of the foreground scope: %+v", ev)
	}

}
