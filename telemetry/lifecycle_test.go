package telemetry_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
)

// TestProgressSpanEvent: progress reports become at most one
// "agentwork.work.progress" event a second on invoke_agent, counts as
// attributes, and Debug log lines with the counts; never content.
func TestProgressSpanEvent(t *testing.T) {
	h := newHarness(t)
	ctx, root := h.root()
	release := make(chan struct{})
	id, err := h.launch(ctx, researcher, work.Spec{Run: func(ctx context.Context) (string, error) {
		ex, _ := work.ExecutionFrom(ctx)
		_, _ = boundary.BeginRequest(ex) // emits (the first)
		boundary.BeginToolCall(ex)       // within the second: counted only
		h.clk.Advance(time.Second)
		work.ReportProgress(ctx, 2, 5) // emits
		<-release
		return "report " + canary, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	h.await(id, work.StateCompleted)
	root.End()
	var events []string
	for _, s := range h.spans.Ended() {
		if s.Name() != "invoke_agent researcher" {
			continue
		}
		for _, e := range s.Events() {
			if e.Name == "agentwork.work.progress" {
				events = append(events, e.Name+attrString(e.Attributes))
			}
		}
	}
	// A report made while another event of the Work is being delivered
	// (here, perhaps, its running event) is emitted by the deliverer with
	// the counts of that moment: the first event may already include the
	// tool call, or everything may arrive as one event. The last event
	// always carries the final counts, and there are never more than the
	// two one-second windows allow.
	first := []string{
		"agentwork.work.progress {agentwork.progress.done=0 agentwork.progress.model_requests=1 agentwork.progress.tool_calls=0 agentwork.progress.total=0}",
		"agentwork.work.progress {agentwork.progress.done=0 agentwork.progress.model_requests=1 agentwork.progress.tool_calls=1 agentwork.progress.total=0}",
	}
	final := "agentwork.work.progress {agentwork.progress.done=2 agentwork.progress.model_requests=1 agentwork.progress.tool_calls=1 agentwork.progress.total=5}"
	if len(events) == 0 || len(events) > 2 || events[len(events)-1] != final ||
		(len(events) == 2 && !slices.Contains(first, events[0])) {
		t.Fatalf("progress events:\n%s\nwant at most two, the first one of:\n%s\nthe last:\n%s",
			strings.Join(events, "\n"), strings.Join(first, "\n"), final)
	}
	logs := h.logs.String()
	if !strings.Contains(logs, `"progress.done":2`) || !strings.Contains(logs, `"progress.total":5`) {
		t.Fatalf("no progress log line:\n%s", logs)
	}
	if strings.Contains(logs+renderSpans(h.spans.Ended()), canary) {
		t.Fatal("content reached telemetry")
	}
}

// TestOrphanCounted: a Work Shutdown abandons is counted in
// agentwork.work.orphaned{target} (agentwork_work_orphaned_total), gets an
// "agentwork.work.orphaned" span event and a Warn log line.
func TestOrphanCounted(t *testing.T) {
	h := newHarness(t, work.WithShutdownGrace(0), work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	ctx, root := h.root()
	defer root.End()
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the harness's Close, even when the test fails
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
	rep, _ := h.s.Shutdown(sctx)
	if rep.OrphanCount() != 1 {
		t.Fatalf("report = %v", rep)
	}
	if got := series(h.collect()); !slices.Contains(got, "agentwork.work.orphaned{target=summarizer} 1") {
		t.Fatalf("series:\n%s", strings.Join(got, "\n"))
	}
	if logs := h.logs.String(); !strings.Contains(logs, `"level":"WARN","msg":"agentwork.work.orphaned"`) {
		t.Fatalf("no orphan log line:\n%s", logs)
	}
	// The report itself, logged by the library (not only by an app).
	if logs := h.logs.String(); !strings.Contains(logs, `"level":"WARN","msg":"work engine shut down","report":{"drained":false,`) ||
		!strings.Contains(logs, `"orphans":1,"orphaned":{"summarizer/cancel-requested":1}}}`) {
		t.Fatalf("no shutdown report log line:\n%s", logs)
	}
	unblock()
	h.await(id, work.StateCompleted) // completion still wins after abandonment
	var found bool
	for _, s := range h.spans.Ended() {
		for _, e := range s.Events() {
			if s.Name() == "invoke_agent summarizer" && e.Name == "agentwork.work.orphaned" &&
				attrString(e.Attributes) == " {agentwork.work.state=cancel-requested}" {
				found = true
			}
		}
	}
	if !found {
		t.Fatalf("no orphan span event:\n%s", renderSpans(h.spans.Ended()))
	}
}

// TestStatusPageProgress: the status page shows a live Work's progress
// counts.
func TestStatusPageProgress(t *testing.T) {
	h := newHarness(t)
	ctx, root := h.root()
	defer root.End()
	reported, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	id, err := h.launch(ctx, researcher, work.Spec{Run: func(ctx context.Context) (string, error) {
		ex, _ := work.ExecutionFrom(ctx)
		_, _ = boundary.BeginRequest(ex)
		boundary.BeginToolCall(ex)
		work.ReportProgress(ctx, 2, 5)
		close(reported)
		<-release
		return "", nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	<-reported
	rec := httptest.NewRecorder()
	h.obs.StatusHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/?format=json", nil))
	var p struct {
		Work []struct {
			ID       string
			Progress map[string]int64
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"done": 2, "total": 5, "model_requests": 1, "tool_calls": 1}
	if len(p.Work) != 1 || p.Work[0].ID != id || !maps.Equal(p.Work[0].Progress, want) {
		t.Fatalf("page work = %+v\n%s", p.Work, rec.Body.String())
	}
	unblock()
	h.await(id, work.StateCompleted)
}

// TestShutdownReportLogged: a drained Shutdown logs its report at Info with
// the counts by target and state, and nothing of the Work's content.
func TestShutdownReportLogged(t *testing.T) {
	h := newHarness(t)
	ctx, root := h.root()
	defer root.End()
	id, err := h.launch(ctx, summarizer, work.Spec{Run: func(context.Context) (string, error) { return canary, nil }})
	if err != nil {
		t.Fatal(err)
	}
	h.await(id, work.StateCompleted)
	if _, err := h.s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	logs := h.logs.String()
	if !strings.Contains(logs, `"level":"INFO","msg":"work engine shut down","report":{"drained":true,`) ||
		!strings.Contains(logs, `"report":{"drained":true,"duration":0,"orphans":0}}`) {
		t.Fatalf("no shutdown report log line:\n%s", logs)
	}
	if strings.Contains(logs, canary) {
		t.Fatal("content reached the log")
	}
}
