package telemetry_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agentwork/agentwork/work"
)

// orphanSpans returns the ended "invoke_agent summarizer" spans.
func orphanSpans(h *harness) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range h.spans.Ended() {
		if s.Name() == "invoke_agent summarizer" {
			out = append(out, s)
		}
	}
	return out
}

// TestOrphanEndsSpan: Shutdown's EventOrphaned ends the Work's
// invoke_agent span at once (status Error, error.type=orphaned, after the
// "agentwork.work.orphaned" event), so an exporter sees it while the child
// is still stuck. When the child returns later its terminal event neither
// panics nor ends the span again; the transition and duration metrics
// still count it once.
func TestOrphanEndsSpan(t *testing.T) {
	h := newHarness(t, work.WithShutdownGrace(0), work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	ctx, root := h.root()
	defer root.End()
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	id, err := h.launch(ctx, summarizer, work.Spec{Run: func(context.Context) (string, error) {
		close(started)
		<-release // ignores cancellation
		return "", nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	sctx, cancel := context.WithCancel(context.Background())
	cancel()
	if rep, _ := h.s.Shutdown(sctx); rep.OrphanCount() != 1 {
		t.Fatalf("report = %v", rep)
	}

	// Shutdown has returned; the child is still blocked.
	spans := orphanSpans(h)
	if len(spans) != 1 {
		t.Fatalf("invoke_agent span not ended at the orphan event:\n%s", renderSpans(h.spans.Ended()))
	}
	s := spans[0]
	if s.Status().Code != codes.Error || s.Status().Description != "" {
		t.Fatalf("status = %+v", s.Status())
	}
	if got := attrString(s.Attributes()); !strings.Contains(got, "error.type=orphaned") ||
		!strings.Contains(got, "agentwork.work.state=cancel-requested") {
		t.Fatalf("attributes = %s", got)
	}
	evs := s.Events()
	if len(evs) == 0 || evs[len(evs)-1].Name != "agentwork.work.orphaned" {
		t.Fatalf("last event is not the orphan event:\n%s", renderSpans(spans))
	}
	if !s.EndTime().Equal(evs[len(evs)-1].Time) {
		t.Fatalf("span ended at %v, orphan event at %v", s.EndTime(), evs[len(evs)-1].Time)
	}

	// The child returns: completion still wins, the span stays ended once.
	unblock()
	h.await(id, work.StateCompleted)
	spans = orphanSpans(h)
	if len(spans) != 1 {
		t.Fatalf("invoke_agent span ended %d times", len(spans))
	}
	for _, e := range spans[0].Events() {
		if e.Name == "agentwork.work.completed" {
			t.Fatalf("terminal event landed on the ended span:\n%s", renderSpans(spans))
		}
	}
	if spans[0].Status().Code != codes.Error {
		t.Fatalf("status changed after end: %+v", spans[0].Status())
	}
	got := series(h.collect())
	for _, want := range []string{
		"agentwork.work.orphaned{target=summarizer} 1",
		"agentwork.work.transitions{state=completed,target=summarizer} 1",
	} {
		if !slices.Contains(got, want) {
			t.Fatalf("missing %q in series:\n%s", want, strings.Join(got, "\n"))
		}
	}
	n := 0
	for _, line := range got {
		if strings.HasPrefix(line, "agentwork.work.duration{outcome=completed,target=summarizer} count=1 ") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("duration not counted once:\n%s", strings.Join(got, "\n"))
	}
}
