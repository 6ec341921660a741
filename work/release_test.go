package work_test

import (
	"context"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

func TestRelease(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(1), work.WithMaxStarts(2))
	runRef, runC := h.running(coord, agent)
	qc := h.child()
	qRef := h.start(coord, agent, qc)
	other, otherC := work.NewOwner("other"), h.child()
	oRef := h.start(other, agent, otherC)
	h.refused(coord, observe.LimitStarts)

	h.s.Release(t.Context(), coord)
	for _, id := range []string{runRef.ID, qRef.ID} {
		_, err := h.s.Status(t.Context(), coord, id)
		notFound(t, err)
	}
	if ev := h.obs.waitTerminal(qRef.ID); ev.To != work.StateCancelled {
		t.Fatalf("queued = %+v", ev)
	}
	if runC.ctx.Err() == nil {
		t.Fatal("running child not cancelled")
	}
	runC.returnCtxErr()
	if ev := h.obs.waitTerminal(runRef.ID); ev.To != work.StateCancelled {
		t.Fatalf("running = %+v", ev)
	}
	// The other owner's Work now runs; the released owner has a new budget.
	<-otherC.started
	if st := h.status(other, oRef.ID); st.State != work.StateRunning {
		t.Fatal(st)
	}
	if c := census(h.s); censusTotal(h.s) != 1 || c[work.StateRunning] != 1 {
		t.Fatalf("census = %v", c)
	}
	h.start(coord, agent, h.child())
	h.s.Release(t.Context(), work.NewOwner("never-seen"))
	h.s.Release(t.Context(), work.Owner{})
}

func TestChildScopeReleasedWhenChildEnds(t *testing.T) {
	h := newHarness(t)
	ref, c := h.running(coord, agent)
	scope := c.ex.Scope()
	if scope.Depth() != 1 || scope.ID() == coord.ID() || scope.IsZero() {
		t.Fatalf("scope = %+v", scope)
	}
	gRef, gc := h.running(scope, fn)
	doneRef, err := h.s.Start(t.Context(), work.Spec{Owner: scope, Target: fn, Run: immediate("x")})
	if err != nil {
		t.Fatal(err)
	}
	h.obs.waitTerminal(doneRef.ID)
	if l, _ := h.s.List(t.Context(), scope); len(l) != 2 {
		t.Fatalf("scope list = %v", l)
	}
	if l, _ := h.s.List(t.Context(), coord); len(l) != 1 {
		t.Fatalf("owner sees its child's work: %v", l)
	}
	c.complete("parent done")
	h.obs.waitTerminal(ref.ID)
	if gc.ctx.Err() == nil {
		t.Fatal("grandchild not cancelled when its parent ended")
	}
	gc.returnCtxErr()
	if ev := h.obs.waitTerminal(gRef.ID); ev.To != work.StateCancelled {
		t.Fatalf("grandchild = %+v", ev)
	}
	if l, _ := h.s.List(t.Context(), scope); len(l) != 0 {
		t.Fatalf("scope still lists %v", l)
	}
	if c := census(h.s); censusTotal(h.s) != 1 || c[work.StateCompleted] != 1 {
		t.Fatalf("census = %v", c)
	}
}

// TestReleaseThenStartAgain: an owner released and used again at once
// (nothing else looked up in between) starts afresh: its starts limit is
// new, and what it started before is gone.
func TestReleaseThenStartAgain(t *testing.T) {
	s := work.New(work.WithMaxStarts(1))
	defer s.Close(context.Background())
	o := work.NewOwner("again")
	run := func(context.Context) (string, error) { return "x", nil }
	first, err := s.Start(t.Context(), work.Spec{Owner: o, Target: fn, Run: run})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Release(t.Context(), o); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Start(t.Context(), work.Spec{Owner: o, Target: fn, Run: run}); err != nil {
		t.Fatalf("Start after Release: %v", err)
	}
	_, err = s.Status(t.Context(), o, first.ID)
	notFound(t, err)
}
