package work_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestNegativeBudgetRefused: a negative Budget field is refused at the
// earliest point with code invalid_budget and a message naming the field:
// in Spec.Budget by Start and Call (nothing is registered), in SetPool (no
// pool is made), and in WithDefaultBudget (other than -1) or
// WithBudgetCeiling by every Start, Call and SetPool of that engine.
func TestNegativeBudgetRefused(t *testing.T) {
	o := work.NewOwner("coord")
	for _, tt := range []struct {
		name   string
		opts   []work.Option
		spec   work.Budget // for Start and Call
		pool   work.Budget // for SetPool
		inMsg  []string
		noPool bool // SetPool is not refused (only the spec is bad)
	}{
		{name: "spec turns", spec: work.Budget{MaxTurns: -1}, inMsg: []string{"Spec.Budget", "MaxTurns"}, noPool: true},
		{name: "spec tool calls", spec: work.Budget{MaxToolCalls: -3}, inMsg: []string{"MaxToolCalls"}, noPool: true},
		{name: "spec tokens", spec: work.Budget{MaxTokens: -1}, inMsg: []string{"MaxTokens"}, noPool: true},
		{name: "spec duration", spec: work.Budget{MaxDuration: -time.Second}, inMsg: []string{"MaxDuration"}, noPool: true},
		{name: "pool tokens", pool: work.Budget{MaxTurns: 4, MaxTokens: -1}, inMsg: []string{"SetPool", "MaxTokens"}},
		{name: "default below -1", opts: []work.Option{work.WithDefaultBudget(work.Budget{MaxTurns: -2})},
			inMsg: []string{"WithDefaultBudget", "MaxTurns"}},
		{name: "default duration below -1", opts: []work.Option{work.WithDefaultBudget(work.Budget{MaxDuration: -time.Minute})},
			inMsg: []string{"WithDefaultBudget", "MaxDuration"}},
		{name: "ceiling", opts: []work.Option{work.WithBudgetCeiling(work.Budget{MaxToolCalls: -1})},
			inMsg: []string{"WithBudgetCeiling", "MaxToolCalls"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.opts...)
			check := func(op string, err error) {
				t.Helper()
				wantCode(t, err, "invalid_budget")
				for _, s := range tt.inMsg {
					if !strings.Contains(err.Error(), s) {
						t.Fatalf("%s: message %q does not name %q", op, err, s)
					}
				}
			}
			if tt.pool == (work.Budget{}) {
				_, err := h.s.Start(t.Context(), work.Spec{Owner: o, Target: agent, Run: immediate("x"), Budget: tt.spec})
				check("Start", err)
				_, err = h.s.Call(t.Context(), work.Spec{Owner: o, Target: agent, Run: immediate("x"), Budget: tt.spec})
				check("Call", err)
				if l, _ := h.s.List(t.Context(), o); len(l) != 0 || censusTotal(h.s) != 0 {
					t.Fatalf("a refused start registered Work: %v", l)
				}
				if h.obs.count(observe.EventQueued) != 0 {
					t.Fatal("a refused start was observed as queued")
				}
			}
			pool := tt.pool
			if pool == (work.Budget{}) {
				pool = work.Budget{MaxTurns: 4}
			}
			err := h.s.SetPool(t.Context(), o, pool)
			if tt.noPool {
				if err != nil {
					t.Fatalf("SetPool(valid) = %v", err)
				}
				return
			}
			check("SetPool", err)
			if _, ok := h.s.PoolForTest(o); ok {
				t.Fatal("a refused SetPool made a pool")
			}
		})
	}
}

// TestDefaultBudgetMinusOneIsUnlimited: in WithDefaultBudget, -1 keeps its
// meaning of "no limit" for that field (no deadline for MaxDuration), and
// such an engine starts Work.
func TestDefaultBudgetMinusOneIsUnlimited(t *testing.T) {
	h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxTurns: -1, MaxToolCalls: -1, MaxTokens: -1, MaxDuration: -1}))
	spec := work.Spec{Owner: work.NewOwner("coord"), Target: agent, Run: immediate("x")}
	if b := h.s.EffectiveBudget(spec); b != (work.Budget{}) {
		t.Fatalf("effective budget = %+v, want no limits", b)
	}
	if _, err := h.s.Start(t.Context(), spec); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := h.s.SetPool(t.Context(), spec.Owner, work.Budget{MaxTurns: 8}); err != nil {
		t.Fatalf("SetPool: %v", err)
	}
}
