package driver

import (
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/observe"
)

// The registry's pool resolves and settles reservations as the in-process
// engine's pools do (work.Engine.SetPool).
func TestPoolReserve(t *testing.T) {
	p := &Pool{Limit: [3]int64{8, 0, 1000}}
	// An agent that sets nothing reserves its default capped at its share
	// (a quarter of the pool), in each limited dimension only.
	run, held, short := p.Reserve([3]int64{}, [3]int64{50, 100, 0}, false)
	if short != "" || run != [3]int64{2, 100, 250} || held != [3]int64{2, 0, 250} {
		t.Fatalf("default agent: run %v held %v short %q", run, held, short)
	}
	// A function that sets nothing reserves nothing in limited dimensions.
	run, held, _ = p.Reserve([3]int64{}, [3]int64{50, 100, 0}, true)
	if run != [3]int64{0, 100, 0} || held != [3]int64{} {
		t.Fatalf("function: run %v held %v", run, held)
	}
	// Its own limit is reserved whole, refused when it does not fit.
	if _, held, short = p.Reserve([3]int64{6}, [3]int64{6, 100, 0}, false); short != "" || held[0] != 6 {
		t.Fatalf("explicit 6 of 8: held %v short %q", held, short)
	}
	p.Held[0] = 6
	if _, _, short = p.Reserve([3]int64{3}, [3]int64{3, 100, 0}, false); short != observe.BudgetTurns {
		t.Fatalf("explicit 3 of the 2 left: short %q, want turns", short)
	}
	// What remains caps a default reservation; nothing left refuses it.
	if run, _, _ = p.Reserve([3]int64{}, [3]int64{50, 100, 0}, false); run[0] != 2 {
		t.Fatalf("default with 2 left: %v", run)
	}
	p.Held[0] = 8
	if _, _, short = p.Reserve([3]int64{}, [3]int64{50, 100, 0}, false); short != observe.BudgetTurns {
		t.Fatalf("nothing left: short %q", short)
	}
	// No pool: the resolved budget as it is.
	var none *Pool
	if run, held, short = none.Reserve([3]int64{1}, [3]int64{1, 2, 3}, false); run != [3]int64{1, 2, 3} || held != [3]int64{} || short != "" {
		t.Fatalf("no pool: %v %v %q", run, held, short)
	}
}

func TestPoolSettle(t *testing.T) {
	p := &Pool{Limit: [3]int64{8, 10, 1000}, Held: [3]int64{4, 5, 500}}
	// Spent is charged, the reservation refunded.
	p.Settle([3]int64{4, 5, 500}, &observe.Usage{Turns: 1, ToolCalls: 2, InputTokens: 30, OutputTokens: 10})
	if p.Held != [3]int64{} || p.Used != [3]int64{1, 2, 40} {
		t.Fatalf("after settle: held %v used %v", p.Held, p.Used)
	}
	// Unknown token usage charges the token reservation in full.
	p.Held = [3]int64{2, 0, 100}
	p.Settle([3]int64{2, 0, 100}, &observe.Usage{Turns: 1, UnknownUsage: 1})
	if p.Used != [3]int64{2, 2, 140} {
		t.Fatalf("unknown usage: used %v", p.Used)
	}
	// An attempt lost with its worker: the whole reservation.
	p.Held = [3]int64{3, 1, 10}
	p.Settle([3]int64{3, 1, 10}, nil)
	if p.Held != [3]int64{} || p.Used != [3]int64{5, 3, 150} {
		t.Fatalf("lost: held %v used %v", p.Held, p.Used)
	}
}

// TestPoolReserveRule: the rule of a reservation, dimension by dimension.
func TestPoolReserveRule(t *testing.T) {
	for _, tc := range []struct {
		name              string
		limit, avail      [3]int64
		want, eff         [3]int64
		function          bool
		wantRun, wantHeld [3]int64
		short             string
	}{
		{"unpooled", [3]int64{}, [3]int64{}, [3]int64{}, [3]int64{50, 100, 0}, false, [3]int64{50, 100, 0}, [3]int64{}, ""},
		{"agent share", [3]int64{20, 0, 200000}, [3]int64{20, 0, 200000}, [3]int64{}, [3]int64{50, 100, 0}, false,
			[3]int64{5, 100, 50000}, [3]int64{5, 0, 50000}, ""},
		{"explicit fits", [3]int64{20, 0, 0}, [3]int64{10, 0, 0}, [3]int64{8, 0, 0}, [3]int64{8, 100, 0}, false, [3]int64{8, 100, 0}, [3]int64{8, 0, 0}, ""},
		{"explicit too big", [3]int64{20, 0, 0}, [3]int64{5, 0, 0}, [3]int64{8, 0, 0}, [3]int64{8, 100, 0}, false, [3]int64{}, [3]int64{}, observe.BudgetTurns},
		{"nothing remains", [3]int64{0, 10, 0}, [3]int64{0, 0, 0}, [3]int64{}, [3]int64{50, 100, 0}, false, [3]int64{50}, [3]int64{}, observe.BudgetToolCalls},
		{"share capped by remaining", [3]int64{20, 0, 0}, [3]int64{2, 0, 0}, [3]int64{}, [3]int64{50, 0, 0}, false, [3]int64{2}, [3]int64{2}, ""},
		{"function reserves nothing", [3]int64{20, 0, 0}, [3]int64{20, 0, 0}, [3]int64{}, [3]int64{50, 100, 0}, true, [3]int64{0, 100, 0}, [3]int64{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, held, short := contract.PoolReserve(tc.limit, tc.avail, tc.want, tc.eff, tc.function)
			if short != tc.short || (short == "" && (run != tc.wantRun || held != tc.wantHeld)) {
				t.Fatalf("PoolReserve = %v %v %q, want %v %v %q", run, held, short, tc.wantRun, tc.wantHeld, tc.short)
			}
		})
	}
}

func TestPoolCharge(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit [3]int64
		spent observe.Usage
		want  [3]int64
	}{
		{"known", [3]int64{5, 0, 1000}, observe.Usage{Turns: 2, ToolCalls: 1, InputTokens: 100, OutputTokens: 200}, [3]int64{2, 1, 300}},
		{"unknown usage charges the token limit", [3]int64{5, 0, 1000},
			observe.Usage{Turns: 2, ToolCalls: 1, InputTokens: 300, UnknownUsage: 1}, [3]int64{2, 1, 1000}},
		{"unknown without token limit", [3]int64{5, 0, 0},
			observe.Usage{Turns: 2, ToolCalls: 1, OutputTokens: 300, UnknownUsage: 2}, [3]int64{2, 1, 300}},
	} {
		if got := contract.PoolCharge(tc.limit, contract.Dims(tc.spent.Turns, tc.spent.ToolCalls, tc.spent.Tokens()), tc.spent.UnknownUsage > 0); got != tc.want {
			t.Errorf("%s: PoolCharge = %v, want %v", tc.name, got, tc.want)
		}
	}
	var b work.Budget
	SetBudgetDims(&b, [3]int64{1, 2, 3})
	if b.MaxTurns != 1 || b.MaxToolCalls != 2 || b.MaxTokens != 3 || BudgetDims(b) != [3]int64{1, 2, 3} {
		t.Fatalf("BudgetDims round trip: %+v", b)
	}
}
