package telemetry_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestReplayRebuildsSpanOnly replays a Work's lifecycle as a durable
// runner does in a process that rebuilds it: Bind, then Replay for each
// event. The span is exported whole, with the original times, and no
// metric or log line is recorded; the same events through Event then
// count once.
func TestReplayRebuildsSpanOnly(t *testing.T) {
	h := newHarness(t)
	base := observe.Event{WorkID: "0123456789abcdef0123456789abcdef", Owner: "coordinator", Target: "researcher", Kind: work.KindAgent}
	events := func() []observe.Event {
		q, r, b, u, c := base, base, base, base, base
		q.Type, q.To, q.Time = observe.EventQueued, work.StateQueued, epoch
		r.Type, r.From, r.To, r.Time, r.QueueWait = observe.EventRunning, work.StateQueued, work.StateRunning, epoch.Add(time.Second), time.Second
		b.Type, b.Budget, b.Time = observe.EventBudgetExhausted, observe.BudgetTurns, epoch.Add(2*time.Second)
		u.Type, u.Usage, u.Time = observe.EventUsage, observe.Usage{Turns: 3, InputTokens: 10, OutputTokens: 5}, epoch.Add(3*time.Second)
		c.Type, c.From, c.To, c.Time, c.Duration, c.Bytes = observe.EventCompleted, work.StateRunning, work.StateCompleted, epoch.Add(3*time.Second), 2*time.Second, 42
		return []observe.Event{q, r, b, u, c}
	}
	evs := events()
	ctx := h.obs.Bind(context.Background(), context.Background(), evs[0])
	for _, e := range evs {
		h.obs.Replay(ctx, e)
	}
	spans := h.spans.Ended()
	if len(spans) != 1 {
		t.Fatalf("replay ended %d spans, want 1:\n%s", len(spans), renderSpans(spans))
	}
	sp := spans[0]
	if !sp.StartTime().Equal(epoch) || !sp.EndTime().Equal(epoch.Add(3*time.Second)) {
		t.Errorf("span runs %v - %v, want %v - %v", sp.StartTime(), sp.EndTime(), epoch, epoch.Add(3*time.Second))
	}
	got := renderSpans(spans)
	for _, want := range []string{"event agentwork.work.queued", "event agentwork.work.running", "event agentwork.work.completed", "agentwork.work.state=completed",
		"event agentwork.work.budget_exhausted {agentwork.work.budget=turns}", "agentwork.work.turns=3", "gen_ai.usage.input_tokens=10"} {
		if !strings.Contains(got, want) {
			t.Errorf("replayed span lacks %q:\n%s", want, got)
		}
	}
	if s := series(h.collect()); len(nonGauge(s)) != 0 {
		t.Errorf("replay recorded metrics: %v", nonGauge(s))
	}
	if l := h.logs.String(); l != "" {
		t.Errorf("replay logged: %s", l)
	}

	// The same lifecycle reported live counts once.
	live := events()
	lctx := h.obs.Bind(context.Background(), context.Background(), live[0])
	for _, e := range live {
		h.obs.Event(lctx, e)
	}
	s := strings.Join(nonGauge(series(h.collect())), "\n")
	for _, want := range []string{
		"agentwork.work.transitions{state=queued,target=researcher} 1",
		"agentwork.work.transitions{state=running,target=researcher} 1",
		"agentwork.work.transitions{state=completed,target=researcher} 1",
		"agentwork.work.duration{outcome=completed,target=researcher} count=1 sum=2",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("live events: no %q in\n%s", want, s)
		}
	}
	if h.logs.String() == "" {
		t.Error("live events logged nothing")
	}

	// Replay without a recording span does nothing (and does not panic).
	h.obs.Replay(context.Background(), evs[1])
	if n := len(h.spans.Ended()); n != 2 {
		t.Errorf("%d spans ended, want 2", n)
	}
}

// nonGauge drops the gauges' series (the census, not events).
func nonGauge(series []string) []string {
	var out []string
	for _, s := range series {
		if strings.Contains(s, "_items") || strings.Contains(s, "limit") || strings.Contains(s, "slots") || strings.Contains(s, "oldest") || strings.Contains(s, "engine.available") {
			continue
		}
		out = append(out, s)
	}
	return out
}
