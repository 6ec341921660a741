package telemetry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// reportResult is what one ReportUpdate of a child answered: its sequence
// number and duplicate flag, or the refusal's reason.
func reportResult(rec work.UpdateReceipt, err error) string {
	if err != nil {
		var we *work.Error
		if errors.As(err, &we) && errors.Is(err, work.ErrUpdateRefused) {
			return "refused " + we.Class
		}
		return "error " + err.Error()
	}
	if rec.Duplicate {
		return fmt.Sprintf("duplicate %d", rec.Seq)
	}
	return fmt.Sprintf("seq %d", rec.Seq)
}

// canaryValue is an update's JSON payload with the canary in it.
func canaryValue(note string) []byte {
	b, _ := json.Marshal(map[string]string{"note": note + " " + updateCanary})
	return b
}

// TestUpdateTelemetryThroughEngine drives children that talk back
// through a real in-process engine, with the canary in every update value,
// question, answer, input and output: a function child reports updates
// (a repeat, a conflict, a payload that is not JSON, over its count), asks
// a question and waits for the application's Answer; an agent child asks
// a question its next boundary waits on until guidance arrives; a Work
// that declares no updates reports one; a cancelled Work reports one as
// it ends. The span events, the counter and histogram and the log lines
// are there, and the canary is in none of them, nor in the status page or
// the status block, though the application reads it with Updates.
func TestUpdateTelemetryThroughEngine(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(4))
	ctx, root := h.root()
	policy := &work.UpdatePolicy{MaxUpdates: 4, MaxBytes: 4096}

	var mu sync.Mutex
	var reports []string // what the children's ReportUpdate calls answered, in order per child
	report := func(who string) func(work.UpdateReceipt, error) {
		return func(rec work.UpdateReceipt, err error) {
			mu.Lock()
			reports = append(reports, who+": "+reportResult(rec, err))
			mu.Unlock()
		}
	}
	// Accepted questions, as the Observer has seen them.
	questions := make(chan string, 4)
	h.hook.set(func(e observe.Event) {
		if e.Type == observe.EventUpdate && e.Question && e.ErrorClass == "" {
			questions <- e.WorkID
		}
	})

	fn, err := h.launch(ctx, summarizer, work.Spec{Updates: policy, Input: "input " + updateCanary, Run: func(ctx context.Context) (string, error) {
		report("fn")(work.ReportUpdate(ctx, "k1", canaryValue("first"), false))
		report("fn")(work.ReportUpdate(ctx, "k1", canaryValue("first"), false))
		report("fn")(work.ReportUpdate(ctx, "k1", canaryValue("changed"), false))
		report("fn")(work.ReportUpdate(ctx, "k2", []byte("not json "+updateCanary), false))
		report("fn")(work.ReportUpdate(ctx, "k3", canaryValue("second"), false))
		report("fn")(work.ReportUpdate(ctx, "k4", canaryValue("may I?"), true))
		answer, err := work.AwaitAnswer(ctx)
		if err != nil || len(answer) != 1 || !strings.Contains(answer[0], updateCanary) {
			return "", fmt.Errorf("answer %q %v", answer, err)
		}
		report("fn")(work.ReportUpdate(ctx, "k5", canaryValue("third"), false))
		report("fn")(work.ReportUpdate(ctx, "k6", canaryValue("one too many"), false))
		return "output " + updateCanary, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := h.launch(ctx, researcher, work.Spec{Updates: policy, Input: "input " + updateCanary, Run: func(ctx context.Context) (string, error) {
		ex, _ := work.ExecutionFrom(ctx)
		report("agent")(work.ReportUpdate(ctx, "call_q", canaryValue("which source?"), true))
		if _, err := boundary.BeginRequest(ex); err != nil { // waits for the answer
			return "", err
		}
		g := boundary.Guidance(ex)
		boundary.EndRequest(ex, 10, 5, true)
		if len(g) != 1 || !strings.Contains(g[0], updateCanary) {
			return "", fmt.Errorf("guidance %q", g)
		}
		return "output " + updateCanary, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{<-questions, <-questions} {
		if id != fn && id != agent {
			t.Fatalf("question of %s", id)
		}
	}

	// Both children wait for their answers: the application reads the
	// updates (with the canary), the pages and the status block do not.
	ups, err := h.s.Updates(ctx, h.owner, fn, 0)
	if err != nil || len(ups) != 3 || !strings.Contains(string(ups[2].Value), updateCanary) || !ups[2].Question {
		t.Fatalf("Updates: %+v %v", ups, err)
	}
	html, js := statusPages(t, h)
	set, err := middleware.Prepare(h.s, h.owner, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	block := set.StatusBlock(ctx)
	if !strings.Contains(block, fn) || !strings.Contains(block, agent) {
		t.Fatalf("status block lacks the Work:\n%s", block)
	}

	if _, err := h.s.Answer(ctx, h.owner, fn, "", "answer "+updateCanary); err != nil {
		t.Fatal(err)
	}
	h.action(ctx, "send", agent, func(context.Context) (string, string) {
		if _, err := h.s.Send(ctx, h.owner, agent, "call_send", "use the second "+updateCanary); err != nil {
			t.Fatal(err)
		}
		return "ok", ""
	})
	h.await(fn, work.StateCompleted)
	h.await(agent, work.StateCompleted)

	// A Work that declares no updates, and one cancelled before it reports.
	undeclared, err := h.launch(ctx, summarizer, work.Spec{Run: func(ctx context.Context) (string, error) {
		report("undeclared")(work.ReportUpdate(ctx, "k", canaryValue("hello"), false))
		return "", nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	h.await(undeclared, work.StateCompleted)
	started := make(chan struct{})
	ending, err := h.launch(ctx, summarizer, work.Spec{Updates: policy, Run: func(ctx context.Context) (string, error) {
		close(started)
		<-ctx.Done()
		report("ending")(work.ReportUpdate(ctx, "k", canaryValue("last words"), false))
		return "", ctx.Err()
	}})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	if _, err := h.s.Cancel(ctx, h.owner, ending); err != nil {
		t.Fatal(err)
	}
	h.await(ending, work.StateCancelled)
	html2, js2 := statusPages(t, h)
	block2 := set.StatusBlock(ctx)
	if err := set.Release(); err != nil {
		t.Fatal(err)
	}
	root.End()

	mu.Lock()
	got := strings.Join(reports, "\n")
	mu.Unlock()
	var agentReports, fnReports, rest []string
	for _, r := range strings.Split(got, "\n") {
		switch {
		case strings.HasPrefix(r, "agent:"):
			agentReports = append(agentReports, r)
		case strings.HasPrefix(r, "fn:"):
			fnReports = append(fnReports, r)
		default:
			rest = append(rest, r)
		}
	}
	diff(t, "reports", strings.Join(append(append(fnReports, agentReports...), rest...), "\n"), strings.Join([]string{
		"fn: seq 1", "fn: duplicate 1", "fn: refused conflict", "fn: refused invalid", "fn: seq 2", "fn: seq 3",
		"fn: seq 4", "fn: refused count",
		"agent: seq 1",
		"undeclared: refused not_declared", "ending: refused ending",
	}, "\n"))

	spans := renderSpans(h.spans.Ended())
	for _, want := range []string{
		// The function child: the repeat adds nothing; the update after
		// the answer is seq 4, the next one over the count.
		"  event agentwork.work.running {agentwork.work.state=running}\n" +
			"  event agentwork.work.update {agentwork.update.bytes=49 agentwork.update.question=false agentwork.update.seq=1}\n" +
			"  event agentwork.work.update {agentwork.update.bytes=51 agentwork.update.question=false error.type=conflict}\n" +
			"  event agentwork.work.update {agentwork.update.bytes=41 agentwork.update.question=false error.type=invalid}\n" +
			"  event agentwork.work.update {agentwork.update.bytes=50 agentwork.update.question=false agentwork.update.seq=2}\n" +
			"  event agentwork.work.update {agentwork.update.bytes=50 agentwork.update.question=true agentwork.update.seq=3}\n" +
			"  event agentwork.work.guidance.accepted {agentwork.guidance.count=1}\n" +
			"  event agentwork.work.guidance.delivered {agentwork.guidance.count=1}\n" +
			"  event agentwork.work.update {agentwork.update.bytes=49 agentwork.update.question=false agentwork.update.seq=4}\n" +
			"  event agentwork.work.update {agentwork.update.bytes=56 agentwork.update.question=false error.type=count}\n" +
			"  event agentwork.work.completed",
		"agentwork.work.updates.refused=3 agentwork.work.updates=4 ",
		// The agent child's granted request is counted (its progress
		// report's place among the events is checked below).
		"  event agentwork.work.progress {agentwork.progress.done=0 agentwork.progress.model_requests=1 agentwork.progress.tool_calls=0 agentwork.progress.total=0}\n",
		"agentwork.work.updates.refused=0 agentwork.work.updates=1 ",
		"  event agentwork.work.update {agentwork.update.bytes=49 agentwork.update.question=false error.type=not_declared}\n",
		"  event agentwork.work.cancel_requested {agentwork.work.state=cancel-requested}\n" +
			"  event agentwork.work.update {agentwork.update.bytes=54 agentwork.update.question=false error.type=ending}\n",
	} {
		if !strings.Contains(spans, want) {
			t.Errorf("spans lack %q:\n%s", want, spans)
		}
	}
	// The agent child: its question, then the guidance delivered at the
	// boundary that waited. The progress report of the request it granted
	// (checked above) may come before or after the delivery: a progress
	// report is coalesced, and one that finds another event of the Work
	// being delivered is flushed by that deliverer, after it.
	var noProgress strings.Builder
	for line := range strings.Lines(spans) {
		if !strings.Contains(line, "event agentwork.work.progress ") {
			noProgress.WriteString(line)
		}
	}
	if want := "  event agentwork.work.update {agentwork.update.bytes=57 agentwork.update.question=true agentwork.update.seq=1}\n" +
		"  event agentwork.work.guidance.accepted {agentwork.guidance.count=1}\n" +
		"  event agentwork.work.guidance.delivered {agentwork.guidance.count=1}\n" +
		"  event agentwork.work.completed"; !strings.Contains(noProgress.String(), want) {
		t.Errorf("spans lack %q (progress reports aside):\n%s", want, spans)
	}

	var metrics []string
	for _, s := range series(h.collect()) {
		if strings.HasPrefix(s, "agentwork.work.update") {
			metrics = append(metrics, s)
		}
	}
	diff(t, "update metrics", strings.Join(metrics, "\n"), strings.Join([]string{
		"agentwork.work.updates{outcome=accepted,target=researcher} 1",
		"agentwork.work.updates{outcome=accepted,target=summarizer} 4",
		"agentwork.work.updates{outcome=conflict,target=summarizer} 1",
		"agentwork.work.updates{outcome=count,target=summarizer} 1",
		"agentwork.work.updates{outcome=ending,target=summarizer} 1",
		"agentwork.work.updates{outcome=invalid,target=summarizer} 1",
		"agentwork.work.updates{outcome=not_declared,target=summarizer} 1",
		"agentwork.work.update{target=researcher} count=1 sum=57",
		"agentwork.work.update{target=summarizer} count=4 sum=198",
	}, "\n"))

	logs := h.logs.String()
	for _, want := range []string{`"level":"INFO","msg":"agentwork.work.update"`, `"outcome":"accepted","update.seq":3,"bytes":50,"update.question":true`,
		`"updates.accepted":4,"updates.refused":3`} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %s:\n%s", want, logs)
		}
	}
	updateMarks.check(t, h, html, js, html2, js2, block, block2)
}

// TestUpdateForeground: a foreground call's child has no Work, so its
// updates are refused (not_declared): they count and log, with no span
// event (nothing would bound them), and the canary is nowhere.
func TestUpdateForeground(t *testing.T) {
	h := newHarness(t)
	ctx, root := h.root()
	var results []string
	out, err := h.foreground(ctx, summarizer, func(ctx context.Context) (string, error) {
		for i := range 40 {
			results = append(results, reportResult(work.ReportUpdate(ctx, fmt.Sprint("k", i), canaryValue("fg"), i%2 == 0)))
		}
		return "output " + updateCanary, nil
	})
	if err != nil || !strings.Contains(out, updateCanary) {
		t.Fatalf("Call: %q %v", out, err)
	}
	root.End()
	for _, r := range results {
		if r != "refused not_declared" {
			t.Fatalf("a foreground update answered %q", r)
		}
	}
	if spans := renderSpans(h.spans.Ended()); strings.Contains(spans, "update") {
		t.Errorf("a foreground update reached a span:\n%s", spans)
	}
	var metrics []string
	for _, s := range series(h.collect()) {
		if strings.HasPrefix(s, "agentwork.work.update") {
			metrics = append(metrics, s)
		}
	}
	diff(t, "update metrics", strings.Join(metrics, "\n"), "agentwork.work.updates{outcome=not_declared,target=summarizer} 40")
	if n := strings.Count(h.logs.String(), `"msg":"agentwork.work.update","work.id":"","work.target":"summarizer","outcome":"not_declared"`); n != 40 {
		t.Errorf("%d update log lines, want 40:\n%s", n, h.logs.String())
	}
	updateMarks.check(t, h)
}
