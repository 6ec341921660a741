package telemetry_test

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
)

// waitCanary is planted in approval inputs, job handles and job outputs.
const waitCanary = "CANARY-wait-7a11-do-not-export"

// noCanary fails t if s holds the wait canary.
func noCanary(t *testing.T, where, s string) {
	t.Helper()
	if strings.Contains(s, waitCanary) || strings.Contains(s, "7a11") {
		t.Errorf("canary in %s: %q", where, s)
	}
}

// checkNoCanary searches every span, metric, log line and the status
// page (HTML and JSON) of h for the wait canary, and fails unless each of
// them recorded something.
func checkNoCanary(t *testing.T, h *harness, pages ...string) {
	t.Helper()
	spans := h.spans.Ended()
	if len(spans) == 0 {
		t.Fatal("no span ended")
	}
	for _, s := range spans {
		noCanary(t, "span name", s.Name())
		noCanary(t, "status description", s.Status().Description)
		for _, kv := range s.Attributes() {
			noCanary(t, "span attribute "+string(kv.Key), kv.Value.Emit())
		}
		for _, e := range s.Events() {
			noCanary(t, "event name", e.Name)
			for _, kv := range e.Attributes {
				noCanary(t, "event attribute "+string(kv.Key), kv.Value.Emit())
			}
		}
	}
	rm := h.collect()
	if len(series(rm)) == 0 {
		t.Fatal("no metric series")
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			noCanary(t, "metric name", m.Name)
			noCanary(t, "metric description", m.Description)
			for _, set := range dataPointSets(m.Data) {
				for _, kv := range set.ToSlice() {
					noCanary(t, "metric "+m.Name+" label "+string(kv.Key), kv.Value.Emit())
				}
			}
		}
	}
	logs := h.logs.String()
	if logs == "" {
		t.Fatal("no log line")
	}
	for _, line := range strings.Split(logs, "\n") {
		noCanary(t, "log line", line)
	}
	for _, p := range pages {
		noCanary(t, "status page", p)
	}
}

// statusPages returns the status page as HTML and as JSON.
func statusPages(t *testing.T, h *harness) (html, js string) {
	t.Helper()
	srv := httptest.NewServer(h.obs.StatusHandler())
	defer srv.Close()
	get := func(path string) string {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	return get("/"), get("/?format=json")
}

// TestApprovalTelemetryThroughSupervisor drives Work that needs approval
// through a real Supervisor (approved, denied, timed out) with the canary
// in every input and output: the span events, the gauges (the age of the
// oldest request, not in the queued age), the status page's marker and
// the log lines are there, and the canary is nowhere in them, though the
// approver reads it in Pending.
func TestApprovalTelemetryThroughSupervisor(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(1))
	ctx, root := h.root()
	out := func(context.Context) (string, error) { return "output " + waitCanary, nil }

	approved, err := h.launch(ctx, researcher, work.Spec{NeedsApproval: true, Input: "approve me " + waitCanary, Run: out})
	if err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(4 * time.Minute)
	denied, err := h.launch(ctx, researcher, work.Spec{NeedsApproval: true, Input: "deny me " + waitCanary, Run: out})
	if err != nil {
		t.Fatal(err)
	}
	expired, err := h.launch(ctx, summarizer, work.Spec{NeedsApproval: true, ApprovalTimeout: time.Hour, Input: "let me expire " + waitCanary, Run: out})
	if err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(6 * time.Minute)

	reqs, err := h.s.Pending(ctx, work.Approver())
	if err != nil || len(reqs) != 3 || !strings.Contains(reqs[0].Input, waitCanary) {
		t.Fatalf("Pending: %+v %v", reqs, err)
	}
	var gauges []string
	for _, s := range series(h.collect()) {
		for _, p := range []string{"agentwork.work.awaiting_approval", "agentwork.work.oldest_approval_age", "agentwork.work.oldest_queued_age", "agentwork.work.items{state=queued"} {
			if strings.HasPrefix(s, p) {
				gauges = append(gauges, s)
			}
		}
	}
	diff(t, "gauges while pending", strings.Join(gauges, "\n"), strings.Join([]string{
		"agentwork.work.awaiting_approval{target=researcher} 2",
		"agentwork.work.awaiting_approval{target=summarizer} 1",
		"agentwork.work.items{state=queued,target=researcher} 2",
		"agentwork.work.items{state=queued,target=summarizer} 1",
		"agentwork.work.oldest_approval_age{target=researcher} 600",
		"agentwork.work.oldest_approval_age{target=summarizer} 360",
		"agentwork.work.oldest_queued_age{target=researcher} 0",
		"agentwork.work.oldest_queued_age{target=summarizer} 0",
	}, "\n"))
	html, js := statusPages(t, h)
	for _, want := range []string{`id="awaiting-approval">3</b>`, `id="approval-oldest">10m0s</b>`, `id="queue-length">0</b>`,
		`data-id="` + approved + `" data-state="queued"`, `queued (awaiting approval)`} {
		if !strings.Contains(html, want) {
			t.Errorf("status page lacks %q:\n%s", want, html)
		}
	}

	if err := h.s.Approve(ctx, h.owner, approved); err != nil {
		t.Fatal(err)
	}
	h.action(ctx, "result", approved, func(ctx context.Context) (string, string) {
		_, res, err := h.s.Result(ctx, h.owner, approved, work.MaxResultWait)
		if err != nil || !strings.Contains(res, waitCanary) {
			t.Fatalf("result %q %v", res, err)
		}
		return "ok", ""
	})
	if err := h.s.Deny(ctx, h.owner, denied); err != nil {
		t.Fatal(err)
	}
	h.await(denied, work.StateCancelled)
	h.clk.Advance(time.Hour)
	h.await(expired, work.StateCancelled)
	root.End()

	spans := renderSpans(h.spans.Ended())
	for _, want := range []string{
		"event agentwork.work.approval_requested\n  event agentwork.work.approved\n  event agentwork.work.running",
		"event agentwork.work.approval_requested\n  event agentwork.work.denied\n  event agentwork.work.cancelled",
		"event agentwork.work.approval_requested\n  event agentwork.work.cancelled",
	} {
		if !strings.Contains(spans, want) {
			t.Errorf("spans lack %q:\n%s", want, spans)
		}
	}
	logs := h.logs.String()
	for _, want := range []string{`"level":"INFO","msg":"agentwork.work.approval_requested"`, `"level":"INFO","msg":"agentwork.work.approved"`,
		`"level":"INFO","msg":"agentwork.work.denied"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %s:\n%s", want, logs)
		}
	}
	html2, js2 := statusPages(t, h)
	checkNoCanary(t, h, html, js, html2, js2)
}
