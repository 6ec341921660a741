package work_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// looping is a child that behaves as an agent that never finishes on its
// own: every turn it reports usage and asks for toolsPerTurn tool calls
// (dropping those beyond ToolCallsLeft, as the adapter does). Only its
// budget stops it; its final answer names the turn it was granted on.
type looping struct {
	toolsPerTurn int
	in, out      int64
	known        bool
	ignoreFinal  bool // keeps asking after the final request
}

func (l looping) run(ctx context.Context) (string, error) {
	ex, ok := work.ExecutionFrom(ctx)
	if !ok {
		return "", errors.New("no execution")
	}
	for i := 0; i < 1000; i++ {
		turn, err := boundary.BeginRequest(ex)
		if err != nil {
			return "", err
		}
		boundary.EndRequest(ex, l.in, l.out, l.known)
		if turn.Final && !l.ignoreFinal {
			return fmt.Sprintf("partial: %s after %d turns", turn.Budget, ex.Usage().Turns), nil
		}
		n := l.toolsPerTurn
		if left := boundary.ToolCallsLeft(ex); left >= 0 && left < n {
			n = left
		}
		for range n {
			if !boundary.BeginToolCall(ex) {
				return "", errors.New("a tool call within ToolCallsLeft was refused")
			}
		}
	}
	return "", errors.New("the budget never stopped the loop")
}

func (h *harness) startSpec(spec work.Spec) work.Ref {
	h.t.Helper()
	ref, err := h.s.Start(context.Background(), spec)
	if err != nil {
		h.t.Fatalf("Start: %v", err)
	}
	return ref
}

func TestBudgetStopsLoopingChildAtEachLimit(t *testing.T) {
	tests := []struct {
		name      string
		budget    work.Budget
		loop      looping
		exhausted string
		usage     observe.Usage
	}{
		{"turns", work.Budget{MaxTurns: 3}, looping{known: true, in: 10, out: 5}, observe.BudgetTurns,
			observe.Usage{Turns: 3, InputTokens: 40, OutputTokens: 20}},
		{"tool calls", work.Budget{MaxToolCalls: 3}, looping{toolsPerTurn: 2, known: true, in: 1, out: 1}, observe.BudgetToolCalls,
			observe.Usage{Turns: 2, ToolCalls: 3, InputTokens: 3, OutputTokens: 3}},
		{"tokens", work.Budget{MaxTokens: 250}, looping{known: true, in: 60, out: 40}, observe.BudgetTokens,
			observe.Usage{Turns: 3, InputTokens: 240, OutputTokens: 160}},
		{"unknown usage is not counted", work.Budget{MaxTurns: 2, MaxTokens: 10}, looping{in: 60, out: 40}, observe.BudgetTurns,
			observe.Usage{Turns: 2, UnknownUsage: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			ref := h.startSpec(work.Spec{Owner: coord, Target: agent, Run: tt.loop.run, Budget: tt.budget})
			ev := h.obs.waitTerminal(ref.ID)
			if ev.To != work.StateCompleted {
				t.Fatalf("terminal = %+v", ev)
			}
			st, out, err := h.s.Result(t.Context(), coord, ref.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("partial: %s after %d turns", tt.exhausted, tt.usage.Turns)
			if out != want || st.BudgetExhausted != tt.exhausted {
				t.Fatalf("result = %q, %q; want %q", out, st.BudgetExhausted, want)
			}
			var usage []observe.Usage
			exhaustedEvents := 0
			for _, e := range h.obs.events(ref.ID) {
				switch e.Type {
				case observe.EventUsage:
					usage = append(usage, e.Usage)
				case observe.EventBudgetExhausted:
					exhaustedEvents++
					if e.Budget != tt.exhausted {
						t.Errorf("exhausted event budget = %q", e.Budget)
					}
				}
			}
			if len(usage) != 1 || usage[0] != tt.usage || exhaustedEvents != 1 {
				t.Fatalf("usage = %+v, exhausted events = %d; want %+v", usage, exhaustedEvents, tt.usage)
			}
		})
	}
}

func TestBudgetFailOnExhaustion(t *testing.T) {
	h := newHarness(t)
	ref := h.startSpec(work.Spec{Owner: coord, Target: agent, Run: looping{}.run,
		Budget: work.Budget{MaxTurns: 2}, FailOnBudget: true})
	if ev := h.obs.waitTerminal(ref.ID); ev.To != work.StateFailed || ev.ErrorClass != work.ClassBudgetExhausted {
		t.Fatalf("terminal = %+v", ev)
	}
	if st := h.status(coord, ref.ID); st.BudgetExhausted != observe.BudgetTurns || st.ResultAvailable {
		t.Fatalf("status = %+v", st)
	}
}

func TestBudgetRequestAfterFinalIsRefused(t *testing.T) {
	h := newHarness(t)
	ref := h.startSpec(work.Spec{Owner: coord, Target: agent, Run: looping{ignoreFinal: true}.run,
		Budget: work.Budget{MaxTurns: 1}})
	if ev := h.obs.waitTerminal(ref.ID); ev.To != work.StateFailed || ev.ErrorClass != work.ClassBudgetExhausted {
		t.Fatalf("terminal = %+v", ev)
	}
}

func TestBudgetDefaultsAndCeiling(t *testing.T) {
	budgetOf := func(h *harness, b work.Budget) work.Budget {
		t.Helper()
		got := make(chan work.Budget, 1)
		ref := h.startSpec(work.Spec{Owner: coord, Target: agent, Budget: b, Run: func(ctx context.Context) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			got <- ex.BudgetForTest()
			return "", nil
		}})
		h.obs.waitTerminal(ref.ID)
		return <-got
	}
	h := newHarness(t)
	if b := budgetOf(h, work.Budget{}); b != (work.Budget{MaxTurns: work.DefaultMaxTurns, MaxToolCalls: work.DefaultMaxToolCalls, MaxDuration: work.DefaultMaxDuration}) {
		t.Fatalf("defaults = %+v", b)
	}
	h = newHarness(t, work.WithDefaultBudget(work.Budget{MaxTurns: 7, MaxToolCalls: -1, MaxTokens: 1000, MaxDuration: time.Minute}),
		work.WithBudgetCeiling(work.Budget{MaxTurns: 20, MaxTokens: 5000, MaxDuration: 2 * time.Minute}))
	tests := []struct {
		name      string
		child     work.Budget
		effective work.Budget
	}{
		{"inherits the defaults", work.Budget{}, work.Budget{MaxTurns: 7, MaxTokens: 1000, MaxDuration: time.Minute}},
		{"lowers", work.Budget{MaxTurns: 3, MaxToolCalls: 2, MaxTokens: 10, MaxDuration: time.Second},
			work.Budget{MaxTurns: 3, MaxToolCalls: 2, MaxTokens: 10, MaxDuration: time.Second}},
		{"cannot raise the ceiling", work.Budget{MaxTurns: 50, MaxTokens: 9000, MaxDuration: time.Hour},
			work.Budget{MaxTurns: 20, MaxTokens: 5000, MaxDuration: 2 * time.Minute}},
	}
	for _, tt := range tests {
		if b := budgetOf(h, tt.child); b != tt.effective {
			t.Errorf("%s: effective = %+v, want %+v", tt.name, b, tt.effective)
		}
	}
}

// holding is a child that spends turns of its budget, then waits for the
// test.
func holding(turns int, release <-chan struct{}) work.RunFunc {
	return func(ctx context.Context) (string, error) {
		ex, _ := work.ExecutionFrom(ctx)
		for range turns {
			if _, err := boundary.BeginRequest(ex); err != nil {
				return "", err
			}
			boundary.EndRequest(ex, 10, 10, true)
		}
		select {
		case <-release:
			return "done", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

func TestPoolSharedByThreeChildren(t *testing.T) {
	h := newHarness(t)
	if err := h.s.SetPool(t.Context(), coord, work.Budget{MaxTurns: 10, MaxTokens: 1000}); err != nil {
		t.Fatal(err)
	}
	child := work.Budget{MaxTurns: 4, MaxTokens: 300}
	release := make(chan struct{})
	first := h.startSpec(work.Spec{Owner: coord, Target: agent, Budget: child, Run: holding(1, release)})
	h.startSpec(work.Spec{Owner: coord, Target: agent, Budget: child, Run: holding(0, make(chan struct{}))})
	if p, _ := h.s.PoolForTest(coord); p.Reserved != (work.Budget{MaxTurns: 8, MaxTokens: 600}) {
		t.Fatalf("reserved = %+v", p.Reserved)
	}
	before := censusTotal(h.s)
	_, err := h.s.Start(t.Context(), work.Spec{Owner: coord, Target: agent, Budget: child, Run: immediate("x")})
	wantCode(t, err, "budget_exhausted")
	if censusTotal(h.s) != before {
		t.Fatal("a refused start registered Work")
	}
	refused := h.obs.ofType(observe.EventRefused)
	if len(refused) != 1 || refused[0].ErrorClass != work.ClassBudgetExhausted || refused[0].Budget != observe.BudgetTurns {
		t.Fatalf("refused events = %+v", refused)
	}
	close(release) // the first child ends after one turn and 20 tokens
	h.obs.waitTerminal(first.ID)
	p, _ := h.s.PoolForTest(coord)
	if p.Reserved != (work.Budget{MaxTurns: 4, MaxTokens: 300}) || p.Spent != (work.Budget{MaxTurns: 1, MaxTokens: 20}) {
		t.Fatalf("after refund: %+v", p)
	}
	third := h.startSpec(work.Spec{Owner: coord, Target: agent, Budget: child, Run: immediate("x")})
	h.obs.waitTerminal(third.ID)
	var reserved, remaining []int64
	h.s.PoolCensusForTest(func(budget string, res, rem int64) {
		if budget == observe.BudgetTurns {
			reserved, remaining = append(reserved, res), append(remaining, rem)
		}
	})
	if len(reserved) != 1 || reserved[0] != 4 || remaining[0] != 5 {
		t.Fatalf("census: reserved %v, remaining %v", reserved, remaining)
	}
	h.s.Release(t.Context(), coord)
	if _, ok := h.s.PoolForTest(coord); ok {
		t.Fatal("Release kept the pool")
	}
}

// TestPoolChildWithoutBudgetTakesItsShare: an agent child without a
// budget of its own reserves its poolShare of the pool (here 2 of 6
// turns), not all of it: three fit, the fourth is refused.
func TestPoolChildWithoutBudgetTakesItsShare(t *testing.T) {
	h := newHarness(t)
	if err := h.s.SetPool(t.Context(), coord, work.Budget{MaxTurns: 6}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		ref := h.startSpec(work.Spec{Owner: coord, Target: agent, Run: looping{}.run})
		h.obs.waitTerminal(ref.ID)
		if st, out, _ := h.s.Result(t.Context(), coord, ref.ID, 0); out != "partial: turns after 2 turns" {
			t.Fatalf("child %d: result = %q (%+v)", i, out, st)
		}
	}
	if p, _ := h.s.PoolForTest(coord); p.Spent.MaxTurns != 6 || p.Reserved.MaxTurns != 0 {
		t.Fatalf("pool = %+v", p)
	}
	_, err := h.s.Start(t.Context(), work.Spec{Owner: coord, Target: agent, Run: immediate("x")})
	wantCode(t, err, "budget_exhausted")
}

// TestPoolUnbudgetedChildrenAreFair: a function child without a budget
// reserves nothing from a pool {20 turns, 200k tokens}, so the next agent
// child starts; an agent child without one reserves its default capped at
// its share (5 turns, 50,000 tokens); a function child's own children
// reserve from the pool, so they cannot escape it.
func TestPoolUnbudgetedChildrenAreFair(t *testing.T) {
	h := newHarness(t)
	if err := h.s.SetPool(t.Context(), coord, work.Budget{MaxTurns: 20, MaxTokens: 200_000}); err != nil {
		t.Fatal(err)
	}
	fnRef, f := h.running(coord, fn)
	if p, _ := h.s.PoolForTest(coord); p.Reserved != (work.Budget{}) {
		t.Fatalf("a function child without a budget reserved %+v", p.Reserved)
	}
	if b := f.ex.BudgetForTest(); b.MaxTurns != 0 || b.MaxTokens != 0 {
		t.Fatalf("function child's budget = %+v", b)
	}
	c := h.child()
	ref := h.startSpec(work.Spec{Owner: coord, Target: agent, Run: c.run})
	<-c.started
	if b := c.ex.BudgetForTest(); b.MaxTurns != 5 || b.MaxTokens != 50_000 || b.MaxToolCalls != work.DefaultMaxToolCalls {
		t.Fatalf("agent child's budget = %+v", b)
	}
	// The function child's own agent child reserves from the pool.
	g := h.child()
	gref := h.startSpec(work.Spec{Owner: f.ex.Scope(), Target: agent, Run: g.run})
	<-g.started
	if p, _ := h.s.PoolForTest(coord); p.Reserved.MaxTurns != 10 || p.Reserved.MaxTokens != 100_000 {
		t.Fatalf("reserved with a grandchild = %+v", p.Reserved)
	}
	_, err := h.s.Start(t.Context(), work.Spec{Owner: f.ex.Scope(), Target: agent, Budget: work.Budget{MaxTurns: 11}, Run: immediate("x")})
	wantCode(t, err, "budget_exhausted")
	for range 3 {
		if _, err := boundary.BeginRequest(g.ex); err != nil {
			t.Fatal(err)
		}
	}
	g.complete("grandchild")
	h.obs.waitTerminal(gref.ID)
	if p, _ := h.s.PoolForTest(coord); p.Reserved.MaxTurns != 5 || p.Spent.MaxTurns != 3 {
		t.Fatalf("after the grandchild settled: %+v", p)
	}
	f.complete("function")
	c.complete("agent")
	h.obs.waitTerminal(fnRef.ID)
	h.obs.waitTerminal(ref.ID)
	if p, _ := h.s.PoolForTest(coord); p.Reserved != (work.Budget{}) || p.Spent.MaxTurns != 3 {
		t.Fatalf("after all settled: %+v", p)
	}
}

func TestPoolUnknownUsageStaysCharged(t *testing.T) {
	h := newHarness(t)
	if err := h.s.SetPool(t.Context(), coord, work.Budget{MaxTokens: 1000}); err != nil {
		t.Fatal(err)
	}
	ref := h.startSpec(work.Spec{Owner: coord, Target: agent, Budget: work.Budget{MaxTurns: 2, MaxTokens: 400}, Run: looping{}.run})
	h.obs.waitTerminal(ref.ID)
	if p, _ := h.s.PoolForTest(coord); p.Spent.MaxTokens != 400 || p.Reserved.MaxTokens != 0 {
		t.Fatalf("pool = %+v", p)
	}
}

func TestNestedChildCannotExceedParentReservation(t *testing.T) {
	h := newHarness(t)
	parentRef, parent := h.running(coord, agent)
	_ = parentRef
	// A parent without an explicit budget or pool sets no reservation.
	h.obs.waitTerminal(h.startSpec(work.Spec{Owner: parent.ex.Scope(), Target: fn, Budget: work.Budget{MaxTurns: 500}, Run: immediate("x")}).ID)
	parent.complete("done")

	spec := work.Spec{Owner: coord, Target: agent, Budget: work.Budget{MaxTurns: 5, MaxTokens: 100}}
	c := h.child()
	spec.Run = c.run
	ref := h.startSpec(spec)
	<-c.started
	scope := c.ex.Scope()
	_, err := h.s.Start(t.Context(), work.Spec{Owner: scope, Target: agent, Budget: work.Budget{MaxTurns: 6}, Run: immediate("x")})
	wantCode(t, err, "budget_exhausted")
	_, err = h.s.Call(t.Context(), work.Spec{Owner: scope, Target: agent, Budget: work.Budget{MaxTokens: 101}, Run: immediate("x")})
	wantCode(t, err, "budget_exhausted")
	// A grandchild that inherits gets its share of its parent's
	// reservation (2 of 5 turns), one that asks for the rest gets it, and
	// what they spend is charged to the parent.
	for _, g := range []struct {
		budget work.Budget
		want   string
	}{{work.Budget{}, "partial: turns after 2 turns"}, {work.Budget{MaxTurns: 3}, "partial: turns after 3 turns"}} {
		gc := h.startSpec(work.Spec{Owner: scope, Target: agent, Budget: g.budget, Run: looping{}.run})
		h.obs.waitTerminal(gc.ID)
		if st, out, _ := h.s.Result(t.Context(), scope, gc.ID, 0); out != g.want {
			t.Fatalf("grandchild = %q (%+v), want %q", out, st, g.want)
		}
	}
	turn, err := boundary.BeginRequest(c.ex)
	if err != nil || !turn.Final || turn.Budget != observe.BudgetTurns {
		t.Fatalf("parent after its grandchild spent its reservation: %+v, %v", turn, err)
	}
	c.complete("parent")
	h.obs.waitTerminal(ref.ID)
}

func TestForegroundCallReservesAndRefunds(t *testing.T) {
	h := newHarness(t)
	if err := h.s.SetPool(t.Context(), coord, work.Budget{MaxTurns: 10}); err != nil {
		t.Fatal(err)
	}
	var during work.PoolState
	out, err := h.s.Call(t.Context(), work.Spec{Owner: coord, Target: agent, Budget: work.Budget{MaxTurns: 4},
		Run: func(ctx context.Context) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			during, _ = h.s.PoolForTest(coord)
			_, err := boundary.BeginRequest(ex)
			return "ok", err
		}})
	if err != nil || out != "ok" {
		t.Fatal(out, err)
	}
	after, _ := h.s.PoolForTest(coord)
	if during.Reserved.MaxTurns != 4 || after.Reserved.MaxTurns != 0 || after.Spent.MaxTurns != 1 {
		t.Fatalf("during %+v, after %+v", during, after)
	}
	usage := h.obs.ofType(observe.EventUsage)
	if len(usage) != 1 || usage[0].Usage.Turns != 1 || usage[0].Target != agent.Label || usage[0].WorkID != "" {
		t.Fatalf("usage events = %+v", usage)
	}
	_, err = h.s.Call(t.Context(), work.Spec{Owner: coord, Target: agent, Budget: work.Budget{MaxTurns: 2},
		Run: looping{}.run, FailOnBudget: true})
	var we *work.Error
	if !errors.As(err, &we) || we.Class != work.ClassBudgetExhausted {
		t.Fatalf("fail on budget: %v", err)
	}
	_, err = h.s.Call(t.Context(), work.Spec{Owner: coord, Target: agent, Budget: work.Budget{MaxTurns: 8}, Run: immediate("x")})
	wantCode(t, err, "budget_exhausted")
}

func TestQueuedCancelRefunds(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(1))
	if err := h.s.SetPool(t.Context(), coord, work.Budget{MaxTurns: 10}); err != nil {
		t.Fatal(err)
	}
	c := h.child()
	running := h.startSpec(work.Spec{Owner: coord, Target: agent, Budget: work.Budget{MaxTurns: 2}, Run: c.run})
	<-c.started
	q := h.startSpec(work.Spec{Owner: coord, Target: agent, Budget: work.Budget{MaxTurns: 3}, Run: immediate("x")})
	if p, _ := h.s.PoolForTest(coord); p.Reserved.MaxTurns != 5 {
		t.Fatalf("pool = %+v", p)
	}
	if _, err := h.s.Cancel(t.Context(), coord, q.ID); err != nil {
		t.Fatal(err)
	}
	if p, _ := h.s.PoolForTest(coord); p.Reserved.MaxTurns != 2 || p.Spent.MaxTurns != 0 {
		t.Fatalf("after cancelling the queued Work: %+v", p)
	}
	c.complete("x")
	h.obs.waitTerminal(running.ID)
	if p, _ := h.s.PoolForTest(coord); p.Reserved.MaxTurns != 0 {
		t.Fatalf("after settlement: %+v", p)
	}
}

func TestDeadlineReportsDurationBudget(t *testing.T) {
	h := newHarness(t)
	ref := h.startSpec(work.Spec{Owner: coord, Target: agent, Budget: work.Budget{MaxDuration: time.Minute},
		Run: func(ctx context.Context) (string, error) { <-ctx.Done(); return "", ctx.Err() }})
	h.obs.wait(ref.ID, func(evs []observe.Event) bool { return len(evs) >= 2 })
	h.clk.Advance(time.Minute)
	if ev := h.obs.waitTerminal(ref.ID); ev.ErrorClass != work.ClassDeadline {
		t.Fatalf("terminal = %+v", ev)
	}
	if st := h.status(coord, ref.ID); st.BudgetExhausted != observe.BudgetDuration {
		t.Fatalf("status = %+v", st)
	}
	ex := h.obs.ofType(observe.EventBudgetExhausted)
	if len(ex) != 1 || ex[0].Budget != observe.BudgetDuration {
		t.Fatalf("events = %+v", ex)
	}
}

func TestSetPoolRefusesChildScopes(t *testing.T) {
	h := newHarness(t)
	_, c := h.running(coord, agent)
	wantCode(t, h.s.SetPool(t.Context(), c.ex.Scope(), work.Budget{MaxTurns: 1}), "invalid_owner")
	wantCode(t, h.s.SetPool(t.Context(), work.Owner{}, work.Budget{MaxTurns: 1}), "invalid_owner")
	c.complete("x")
}

// TestForegroundScopeChildrenReserveFromIt: Work started in a foreground
// call's own scope reserves from the call's reservation (reached through
// the scope), so it cannot exceed it.
func TestForegroundScopeChildrenReserveFromIt(t *testing.T) {
	h := newHarness(t)
	_, err := h.s.Call(t.Context(), work.Spec{Owner: coord, Target: agent, Budget: work.Budget{MaxTurns: 5},
		Run: func(ctx context.Context) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			_, err := h.s.Start(ctx, work.Spec{Owner: ex.Scope(), Target: agent, Budget: work.Budget{MaxTurns: 6}, Run: immediate("x")})
			if err == nil {
				return "", errors.New("a child exceeding the call's reservation was admitted")
			}
			wantCode(t, err, "budget_exhausted")
			return "ok", nil
		}})
	if err != nil {
		t.Fatal(err)
	}
}

// EffectiveBudget resolves a spec's budget as a start does, pools aside:
// own limits, else the defaults, clamped to the ceiling, and the deadline.
func TestEffectiveBudget(t *testing.T) {
	s := work.New(work.WithDefaultBudget(work.Budget{MaxTurns: 7, MaxTokens: 1000}),
		work.WithBudgetCeiling(work.Budget{MaxToolCalls: 5, MaxDuration: time.Minute}))
	defer s.Close(context.Background())
	spec := work.Spec{Budget: work.Budget{MaxToolCalls: 9, MaxTokens: 10}}
	got := s.EffectiveBudget(spec)
	want := work.Budget{MaxTurns: 7, MaxToolCalls: 5, MaxTokens: 10, MaxDuration: time.Minute}
	if got != want {
		t.Fatalf("EffectiveBudget = %+v, want %+v", got, want)
	}
	spec.Budget.MaxDuration = time.Second
	if got := s.EffectiveBudget(spec); got.MaxDuration != time.Second {
		t.Fatalf("own deadline: %v", got.MaxDuration)
	}
}
