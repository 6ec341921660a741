package temporal_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

// TestBudgetThenDeadline: a child whose turns ran out and whose final
// request then outlives its deadline fails deadline_exceeded, and, as
// in-process, the budget that ran out first is the one Status names and
// the only one reported exhausted.
func TestBudgetThenDeadline(t *testing.T) {
	rec := &enginetest.Recorder{}
	eng, queue := deploy(t, "budget-deadline", map[string]temporal.Child{
		"hang": {Kind: work.KindAgent, Run: func(ctx context.Context, _ string) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			for {
				turn, err := boundary.BeginRequest(ex)
				if err != nil {
					return "", err
				}
				if turn.Final {
					<-ctx.Done() // the final request never answers
					return "", ctx.Err()
				}
				boundary.EndRequest(ex, 1, 1, true)
			}
		}},
	}, []temporal.Option{temporal.WithOptions(work.WithObserver(rec))}, nil)
	o := work.NewOwner("budget-deadline-owner-" + queue)
	ref, err := eng.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "hang", Kind: work.KindAgent},
		Input: "x", Budget: work.Budget{MaxTurns: 1, MaxDuration: time.Second},
		Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := settle(t, eng, o, ref.ID)
	if st.State != work.StateFailed || st.BudgetExhausted != observe.BudgetTurns {
		t.Errorf("ended %s, budget %q; want failed, turns", st.State, st.BudgetExhausted)
	}
	var budgets []string
	for _, e := range of(rec.Events(), ref.ID) {
		if e.Type == observe.EventBudgetExhausted {
			budgets = append(budgets, e.Budget)
		}
	}
	if len(budgets) != 1 || budgets[0] != observe.BudgetTurns {
		t.Errorf("budget-exhausted events %v, want [turns]", budgets)
	}
}
