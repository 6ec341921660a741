package temporal_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
)

// The budget options compose as work's do: in order, a later default
// keeping the fields it leaves zero, and WithMaxDuration and a default's
// MaxDuration replacing each other in the order given.
func TestBudgetOptionsComposeAsInProcess(t *testing.T) {
	for _, tc := range []struct {
		name string
		eng  []temporal.Option
		sup  []work.Option
	}{
		{"max duration after a default", []temporal.Option{
			temporal.WithDefaultBudget(work.Budget{MaxDuration: time.Minute}), temporal.WithMaxDuration(time.Hour)},
			[]work.Option{work.WithDefaultBudget(work.Budget{MaxDuration: time.Minute}), work.WithMaxDuration(time.Hour)}},
		{"default after max duration", []temporal.Option{
			temporal.WithMaxDuration(time.Hour), temporal.WithDefaultBudget(work.Budget{MaxDuration: time.Minute})},
			[]work.Option{work.WithMaxDuration(time.Hour), work.WithDefaultBudget(work.Budget{MaxDuration: time.Minute})}},
		{"unlimited default duration", []temporal.Option{
			temporal.WithDefaultBudget(work.Budget{MaxDuration: -1})},
			[]work.Option{work.WithDefaultBudget(work.Budget{MaxDuration: -1})}},
		{"two defaults", []temporal.Option{
			temporal.WithDefaultBudget(work.Budget{MaxTurns: 5}), temporal.WithDefaultBudget(work.Budget{MaxTokens: 100})},
			[]work.Option{work.WithDefaultBudget(work.Budget{MaxTurns: 5}), work.WithDefaultBudget(work.Budget{MaxTokens: 100})}},
		{"ceiling", []temporal.Option{
			temporal.WithBudgetCeiling(work.Budget{MaxTurns: 3, MaxDuration: time.Second})},
			[]work.Option{work.WithBudgetCeiling(work.Budget{MaxTurns: 3, MaxDuration: time.Second})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng := temporal.New(nil, tc.eng...)
			defer eng.Close(context.Background())
			sup := work.New(tc.sup...)
			defer sup.Close(context.Background())
			spec := work.Spec{Owner: work.NewOwner("o"), Target: work.Target{Label: "x", Kind: work.KindAgent}}
			if got, want := eng.EffectiveBudget(spec), sup.EffectiveBudget(spec); got != want {
				t.Errorf("Engine budget %+v, in-process %+v", got, want)
			}
		})
	}
}
