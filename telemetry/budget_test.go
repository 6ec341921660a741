package telemetry_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
)

// TestBudgetTelemetry runs a child that spends two turns, one tool call and
// reported tokens until its turn budget runs out, from an owner with a
// pool: its invoke_agent span gets the usage and the exhausted budget, the
// counters count them, and the pool gauges show the reservation while it
// runs.
func TestBudgetTelemetry(t *testing.T) {
	h := newHarness(t)
	if err := h.s.SetPool(t.Context(), h.owner, work.Budget{MaxTurns: 10, MaxTokens: 1000}); err != nil {
		t.Fatal(err)
	}
	ctx, root := h.root()
	gauges := make(chan []string, 1)
	id, err := h.launch(ctx, researcher, work.Spec{Budget: work.Budget{MaxTurns: 2, MaxTokens: 500},
		Run: func(ctx context.Context) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			var pool []string
			for _, s := range series(h.collect()) {
				if strings.HasPrefix(s, "agentwork.budget.pool.") {
					pool = append(pool, s)
				}
			}
			gauges <- pool
			for {
				turn, err := boundary.BeginRequest(ex)
				if err != nil {
					return "", err
				}
				boundary.EndRequest(ex, 30, 20, true)
				if turn.Final {
					return "partial " + canary, nil
				}
				boundary.BeginToolCall(ex)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	h.await(id, work.StateCompleted)
	root.End()
	wantGauges := []string{
		"agentwork.budget.pool.remaining{budget=tokens} 500",
		"agentwork.budget.pool.remaining{budget=turns} 8",
		"agentwork.budget.pool.reserved{budget=tokens} 500",
		"agentwork.budget.pool.reserved{budget=turns} 2",
	}
	if got := <-gauges; !slices.Equal(got, wantGauges) {
		t.Errorf("pool gauges while running:\n%s", strings.Join(got, "\n"))
	}
	var found bool
	for _, s := range h.spans.Ended() {
		if s.Name() != "invoke_agent researcher" {
			continue
		}
		found = true
		attrs := map[string]string{}
		for _, kv := range s.Attributes() {
			attrs[string(kv.Key)] = kv.Value.String()
		}
		want := map[string]string{"gen_ai.usage.input_tokens": "90", "gen_ai.usage.output_tokens": "60",
			"agentwork.work.turns": "2", "agentwork.work.tool_calls": "2", "agentwork.work.budget": "turns"}
		for k, v := range want {
			if attrs[k] != v {
				t.Errorf("%s = %q, want %q", k, attrs[k], v)
			}
		}
		var events []string
		for _, e := range s.Events() {
			events = append(events, e.Name)
		}
		if !slices.Contains(events, "agentwork.work.budget_exhausted") {
			t.Errorf("events %v", events)
		}
	}
	if !found {
		t.Fatal("no invoke_agent span")
	}
	var got []string
	for _, s := range series(h.collect()) {
		if strings.Contains(s, "budget") || strings.Contains(s, "tokens") || strings.Contains(s, "turns") || strings.Contains(s, "tool_calls") {
			got = append(got, s)
		}
	}
	want := []string{
		"agentwork.budget.pool.remaining{budget=tokens} 850",
		"agentwork.budget.pool.remaining{budget=turns} 8",
		"agentwork.budget.pool.reserved{budget=tokens} 0",
		"agentwork.budget.pool.reserved{budget=turns} 0",
		"agentwork.work.budget_exhausted{budget=turns,target=researcher} 1",
		"agentwork.work.tokens{target=researcher,type=input} 90",
		"agentwork.work.tokens{target=researcher,type=output} 60",
		"agentwork.work.tool_calls{target=researcher} 2",
		"agentwork.work.turns{target=researcher} 2",
	}
	diff(t, "budget series", strings.Join(got, "\n"), strings.Join(want, "\n"))
	if strings.Contains(h.logs.String(), canary) {
		t.Error("the output reached a log line")
	}
}
