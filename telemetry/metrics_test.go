package telemetry_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/agentwork/agentwork/internal/fakeclock"
	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/telemetry/internal/scenario"
	"github.com/agentwork/agentwork/work"
)

// TestScenarioMetrics checks every instrument (name, unit, kind) and every
// data point after the scripted scenario, at the OTel level. The
// promexport golden checks the same scenario after Prometheus translation.
func TestScenarioMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	obs, err := telemetry.New(telemetry.WithMeterProvider(mp), telemetry.WithTracerProvider(noop.NewTracerProvider()))
	if err != nil {
		t.Fatal(err)
	}
	stop, err := scenario.Run(obs, fakeclock.New(scenario.Start))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}

	var instruments []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			kind := "?"
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				kind = "counter"
				if !d.IsMonotonic || d.Temporality != metricdata.CumulativeTemporality {
					kind = "sum?"
				}
			case metricdata.Gauge[int64], metricdata.Gauge[float64]:
				kind = "gauge"
			case metricdata.Histogram[float64], metricdata.Histogram[int64]:
				kind = "histogram"
			}
			instruments = append(instruments, m.Name+" "+m.Unit+" "+kind)
		}
	}
	slices.Sort(instruments)
	wantInstruments := []string{
		"agentwork.budget.pool.remaining {count} gauge",
		"agentwork.budget.pool.reserved {count} gauge",
		"agentwork.engine.available {engine} gauge",
		"agentwork.guidance.messages {message} counter",
		"agentwork.job.polls {poll} counter",
		"agentwork.status_block.rows {row} histogram",
		"agentwork.work.actions {call} counter",
		"agentwork.work.awaiting_approval {work} gauge",
		"agentwork.work.backgrounded {call} counter",
		"agentwork.work.budget_exhausted {work} counter",
		"agentwork.work.concurrency_limit {work} gauge",
		"agentwork.work.duration s histogram",
		"agentwork.work.items {work} gauge",
		"agentwork.work.oldest_approval_age s gauge",
		"agentwork.work.oldest_cancel_requested_age s gauge",
		"agentwork.work.oldest_queued_age s gauge",
		"agentwork.work.orphaned {work} counter",
		"agentwork.work.queue_wait s histogram",
		"agentwork.work.result By histogram",
		"agentwork.work.slots_in_use {work} gauge",
		"agentwork.work.starts_refused {start} counter",
		"agentwork.work.tokens {token} counter",
		"agentwork.work.tool_calls {call} counter",
		"agentwork.work.transitions {transition} counter",
		"agentwork.work.turns {request} counter",
		"agentwork.work.update By histogram",
		"agentwork.work.updates {update} counter",
		"agentwork.work.waiting {work} gauge",
	}
	diff(t, "instruments", strings.Join(instruments, "\n"), strings.Join(wantInstruments, "\n"))

	want := []string{
		"agentwork.budget.pool.remaining{budget=tokens} 146800",
		"agentwork.budget.pool.remaining{budget=tool_calls} 57",
		"agentwork.budget.pool.remaining{budget=turns} 28",
		"agentwork.budget.pool.reserved{budget=tokens} 50000",
		"agentwork.budget.pool.reserved{budget=tool_calls} 20",
		"agentwork.budget.pool.reserved{budget=turns} 10",
		"agentwork.engine.available 1",
		"agentwork.guidance.messages{event=accepted} 3",
		"agentwork.guidance.messages{event=delivered} 1",
		"agentwork.guidance.messages{event=dropped} 2",
		"agentwork.job.polls{outcome=done,target=batch} 1",
		"agentwork.job.polls{outcome=error,target=batch} 1",
		"agentwork.job.polls{outcome=waiting,target=batch} 1",
		"agentwork.status_block.rows count=1 sum=3",
		"agentwork.work.actions{action=cancel,outcome=ok} 1",
		"agentwork.work.actions{action=detach,outcome=not_found} 1",
		"agentwork.work.actions{action=invalid,outcome=invalid} 1",
		"agentwork.work.actions{action=list,outcome=ok} 1",
		"agentwork.work.actions{action=result,outcome=ok} 1",
		"agentwork.work.actions{action=result,outcome=timeout} 1",
		"agentwork.work.actions{action=send,outcome=ok} 3",
		"agentwork.work.actions{action=status,outcome=not_found} 1",
		"agentwork.work.awaiting_approval{target=researcher} 0",
		"agentwork.work.awaiting_approval{target=summarizer} 0",
		"agentwork.work.backgrounded{target=batch} 1",
		"agentwork.work.budget_exhausted{budget=duration,target=summarizer} 1",
		"agentwork.work.budget_exhausted{budget=turns,target=researcher} 1",
		"agentwork.work.concurrency_limit{target=*} 2",
		"agentwork.work.duration{outcome=cancelled,target=researcher} count=1 sum=0.5",
		"agentwork.work.duration{outcome=completed,target=batch} count=1 sum=7",
		"agentwork.work.duration{outcome=completed,target=researcher} count=1 sum=1.5",
		"agentwork.work.duration{outcome=failed,target=summarizer} count=2 sum=15",
		"agentwork.work.items{state=cancel-requested,target=researcher} 0",
		"agentwork.work.items{state=cancel-requested,target=summarizer} 0",
		"agentwork.work.items{state=cancelled,target=researcher} 1",
		"agentwork.work.items{state=cancelled,target=summarizer} 0",
		"agentwork.work.items{state=completed,target=researcher} 1",
		"agentwork.work.items{state=completed,target=summarizer} 0",
		"agentwork.work.items{state=failed,target=researcher} 0",
		"agentwork.work.items{state=failed,target=summarizer} 2",
		"agentwork.work.items{state=queued,target=researcher} 0",
		"agentwork.work.items{state=queued,target=summarizer} 0",
		"agentwork.work.items{state=running,target=researcher} 1",
		"agentwork.work.items{state=running,target=summarizer} 0",
		"agentwork.work.oldest_approval_age{target=researcher} 0",
		"agentwork.work.oldest_approval_age{target=summarizer} 0",
		"agentwork.work.oldest_cancel_requested_age{target=researcher} 0",
		"agentwork.work.oldest_cancel_requested_age{target=summarizer} 0",
		"agentwork.work.oldest_queued_age{target=researcher} 0",
		"agentwork.work.oldest_queued_age{target=summarizer} 0",
		"agentwork.work.orphaned{target=summarizer} 1",
		"agentwork.work.queue_wait{target=batch} count=1 sum=0",
		"agentwork.work.queue_wait{target=researcher} count=3 sum=1.5",
		"agentwork.work.queue_wait{target=summarizer} count=3 sum=0",
		"agentwork.work.result{target=batch} count=1 sum=100",
		"agentwork.work.result{target=researcher} count=1 sum=300",
		"agentwork.work.slots_in_use{target=researcher} 1",
		"agentwork.work.slots_in_use{target=summarizer} 0",
		"agentwork.work.starts_refused{reason=starts,target=researcher} 1",
		"agentwork.work.tokens{target=researcher,type=input} 2500",
		"agentwork.work.tokens{target=researcher,type=output} 700",
		"agentwork.work.tool_calls{target=researcher} 3",
		"agentwork.work.transitions{state=cancel-requested,target=researcher} 1",
		"agentwork.work.transitions{state=cancel-requested,target=summarizer} 1",
		"agentwork.work.transitions{state=cancelled,target=researcher} 1",
		"agentwork.work.transitions{state=completed,target=batch} 1",
		"agentwork.work.transitions{state=completed,target=researcher} 1",
		"agentwork.work.transitions{state=failed,target=summarizer} 2",
		"agentwork.work.transitions{state=queued,target=batch} 1",
		"agentwork.work.transitions{state=queued,target=researcher} 3",
		"agentwork.work.transitions{state=queued,target=summarizer} 3",
		"agentwork.work.transitions{state=running,target=batch} 1",
		"agentwork.work.transitions{state=running,target=researcher} 3",
		"agentwork.work.transitions{state=running,target=summarizer} 3",
		"agentwork.work.turns{target=researcher} 2",
		"agentwork.work.updates{outcome=accepted,target=researcher} 2",
		"agentwork.work.updates{outcome=count,target=researcher} 1",
		"agentwork.work.update{target=researcher} count=2 sum=27",
		"agentwork.work.waiting{target=researcher} 0",
		"agentwork.work.waiting{target=summarizer} 0",
	}
	diff(t, "series", strings.Join(series(rm), "\n"), strings.Join(want, "\n"))

	var bounds []float64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "agentwork.work.duration" {
				bounds = m.Data.(metricdata.Histogram[float64]).DataPoints[0].Bounds
			}
		}
	}
	wantBounds := []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12,
		10.24, 20.48, 40.96, 81.92, 163.84, 327.68, 655.36, 1310.72, 1800, 3600}
	if !slices.Equal(bounds, wantBounds) {
		t.Errorf("duration buckets %v, want %v", bounds, wantBounds)
	}
	var updateBounds []float64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "agentwork.work.update" {
				updateBounds = m.Data.(metricdata.Histogram[int64]).DataPoints[0].Bounds
			}
		}
	}
	if want := []float64{16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576}; !slices.Equal(updateBounds, want) {
		t.Errorf("update bytes buckets %v, want %v", updateBounds, want)
	}
}

// TestItemsGauge: the per-state gauge is read from the registry at each
// collection (no drift), reports every state at 0, sums the watched
// engines, and stops reporting an engine once it is closed.
func TestItemsGauge(t *testing.T) {
	h := newHarness(t)
	second := work.New(work.WithObserver(h.obs), work.WithMaxRunning(3))
	items := func() []string {
		var out []string
		for _, s := range series(h.collect()) {
			if strings.HasPrefix(s, "agentwork.work.items") || strings.HasPrefix(s, "agentwork.work.concurrency_limit") {
				out = append(out, s)
			}
		}
		return out
	}
	if got := items(); len(got) != 1 || got[0] != "agentwork.work.concurrency_limit{target=*} 11" {
		t.Errorf("before any work: %q", got)
	}
	release := make(chan struct{})
	block := func(ctx context.Context) (string, error) { <-release; return "", nil }
	id, err := h.launch(context.Background(), researcher, work.Spec{Run: block})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := second.Start(context.Background(), work.Spec{Owner: h.owner, Target: researcher, Run: block}); err != nil {
		t.Fatal(err)
	}
	got := items()
	want := []string{
		"agentwork.work.concurrency_limit{target=*} 11",
		"agentwork.work.items{state=cancel-requested,target=researcher} 0",
		"agentwork.work.items{state=cancelled,target=researcher} 0",
		"agentwork.work.items{state=completed,target=researcher} 0",
		"agentwork.work.items{state=failed,target=researcher} 0",
		"agentwork.work.items{state=queued,target=researcher} 0",
		"agentwork.work.items{state=running,target=researcher} 2",
	}
	diff(t, "gauge while running", strings.Join(got, "\n"), strings.Join(want, "\n"))

	close(release)
	h.await(id, work.StateCompleted)
	if err := second.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	got = items()
	want = []string{
		"agentwork.work.concurrency_limit{target=*} 8",
		"agentwork.work.items{state=cancel-requested,target=researcher} 0",
		"agentwork.work.items{state=cancelled,target=researcher} 0",
		"agentwork.work.items{state=completed,target=researcher} 1",
		"agentwork.work.items{state=failed,target=researcher} 0",
		"agentwork.work.items{state=queued,target=researcher} 0",
		"agentwork.work.items{state=running,target=researcher} 0",
	}
	diff(t, "gauge after", strings.Join(got, "\n"), strings.Join(want, "\n"))
}
