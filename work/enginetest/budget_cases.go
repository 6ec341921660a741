package enginetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// budget: a Work's budget travels with it and is counted at its child's
// boundary: the turns run out, the next request is the final one, and
// Status names the budget; started to fail on exhaustion, the Work fails.
func (s *suite) budget(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "budget")
	sp := v.spec(o, Turns, "")
	sp.Budget = work.Budget{MaxTurns: 2}
	ref, err := v.e.Start(v.ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	st, out := v.settle(o, ref.ID)
	if st.State != work.StateCompleted || out != "requests=3 final=turns" || st.BudgetExhausted != observe.BudgetTurns {
		t.Fatalf("2 turns: %s %q budget %q, want completed \"requests=3 final=turns\" budget turns", st.State, out, st.BudgetExhausted)
	}
	sp.Budget, sp.FailOnBudget = work.Budget{MaxTurns: 1, MaxTokens: 1000}, true
	ref, err = v.e.Start(v.ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	st, _ = v.settle(o, ref.ID)
	if st.State != work.StateFailed || st.BudgetExhausted != observe.BudgetTurns {
		t.Fatalf("FailOnBudget: %s budget %q, want failed, turns", st.State, st.BudgetExhausted)
	}
}

func (s *suite) pool(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "pool")
	err := v.e.SetPool(t.Context(), work.Owner{}, work.Budget{MaxTurns: 1})
	wantErr(t, "SetPool(zero owner)", err, work.ErrInvalidOwner)
	for _, b := range []work.Budget{{MaxTurns: -1}, {MaxToolCalls: -1}, {MaxTokens: -1}, {MaxDuration: -1}} {
		err := v.e.SetPool(t.Context(), o, b)
		wantErr(t, fmt.Sprintf("SetPool(%+v)", b), err, work.ErrInvalidBudget)
	}
	if !s.caps.Pools {
		if err := v.e.SetPool(t.Context(), o, work.Budget{MaxTurns: 3}); err == nil {
			t.Fatal("SetPool on an Engine without pools: no error (a pool it does not enforce)")
		}
		return
	}
	if err := v.e.SetPool(t.Context(), o, work.Budget{MaxTurns: 3}); err != nil {
		t.Fatalf("SetPool: %v", err)
	}
	withBudget := func(label, input string) work.Spec {
		sp := v.spec(o, label, input)
		sp.Budget = work.Budget{MaxTurns: 2}
		return sp
	}
	token, c := newControl(t, "")
	ref, err := v.e.Start(v.ctx, withBudget(Agent, token))
	if err != nil {
		t.Fatalf("Start within the pool: %v", err)
	}
	v.waitStarted(c)
	r := v.boundary(c)
	if r.ok {
		if err := v.e.SetPool(t.Context(), r.scope, work.Budget{MaxTurns: 1}); !errors.Is(err, work.ErrInvalidOwner) {
			t.Fatalf("SetPool(child scope) = %v, want ErrInvalidOwner", err)
		}
	}
	_, err = v.e.Start(v.ctx, withBudget(Echo, "x"))
	wantErr(t, "Start beyond the pool", err, work.ErrBudgetExhausted)
	if l, _ := v.e.List(t.Context(), o); len(l) != 1 {
		t.Fatalf("a refused start registered Work: %d listed", len(l))
	}
	// What the child did not spend is refunded when it settles.
	v.finish(c, "", nil)
	v.settle(o, ref.ID)
	if _, err := v.e.Start(v.ctx, withBudget(Echo, "y")); err != nil {
		t.Fatalf("Start after the refund: %v", err)
	}
}
