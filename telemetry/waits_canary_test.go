package telemetry_test

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// waitCanary is planted in approval inputs, job handles and job outputs.
const waitCanary = "CANARY-wait-7a11-do-not-export"

// canaryMarks are the strings a canary test searches for: the canary and
// a fragment of it (a partial copy is a leak too). The fragment holds a
// character no hexadecimal id has, so that a random Work, trace or span
// id never matches it (a bare "7a11" did, in about one run in a few
// dozen).
type canaryMarks [2]string

// waitMarks are the wait canary's.
var waitMarks = canaryMarks{waitCanary, "wait-7a11"}

// noCanary fails t if s holds one of the marks.
func (m canaryMarks) noCanary(t *testing.T, where, s string) {
	t.Helper()
	if strings.Contains(s, m[0]) || strings.Contains(s, m[1]) {
		t.Errorf("canary in %s: %q", where, s)
	}
}

// checkNoCanary searches every span, metric, log line and the status
// page (HTML and JSON) of h for the wait canary, and fails unless each of
// them recorded something.
func checkNoCanary(t *testing.T, h *harness, pages ...string) {
	t.Helper()
	waitMarks.check(t, h, pages...)
}

// check searches every span, metric, log line and the given pages (the
// status page as HTML and JSON, a status block) of h for the marks, and
// fails unless spans, metrics and logs each recorded something.
func (m canaryMarks) check(t *testing.T, h *harness, pages ...string) {
	t.Helper()
	noCanary := m.noCanary
	spans := h.spans.Ended()
	if len(spans) == 0 {
		t.Fatal("no span ended")
	}
	for _, s := range spans {
		noCanary(t, "span name", s.Name())
		noCanary(t, "status description", s.Status().Description)
		for _, kv := range s.Attributes() {
			noCanary(t, "span attribute "+string(kv.Key), kv.Value.String())
		}
		for _, e := range s.Events() {
			noCanary(t, "event name", e.Name)
			for _, kv := range e.Attributes {
				noCanary(t, "event attribute "+string(kv.Key), kv.Value.String())
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
					noCanary(t, "metric "+m.Name+" label "+string(kv.Key), kv.Value.String())
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
		noCanary(t, "status page or block", p)
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

// TestApprovalTelemetryThroughEngine drives Work that needs approval
// through a real in-process engine (approved, denied, timed out) with the
// canary in every input and output: the span events, the gauges (the age of
// the oldest request, not in the queued age), the status page's marker and
// the log lines are there, and the canary is nowhere in them, though the
// approver reads it in Pending.
func TestApprovalTelemetryThroughEngine(t *testing.T) {
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

// canaryJob is an external job whose handle, poll errors, failure class
// and output all carry the wait canary. Await reports each poll on polled
// so that the test can drive its fake clock.
type canaryJob struct {
	polled    chan struct{}
	polls     []work.Poll // answers in order; a Poll with Class "err" is a Go error
	n         int
	cancelled chan []byte
}

func (c *canaryJob) job() *work.Job {
	return &work.Job{
		Backoff: work.Backoff{Initial: time.Second, Max: 4 * time.Second},
		Submit: func(ctx context.Context, key, input string) ([]byte, error) {
			return []byte("handle " + waitCanary + " " + input), nil
		},
		Await: func(ctx context.Context, handle []byte) (work.Poll, error) {
			c.polled <- struct{}{}
			p := work.Poll{State: work.PollWaiting}
			if c.n < len(c.polls) {
				p = c.polls[c.n]
			}
			c.n++
			if p.Class == "err" {
				return work.Poll{}, errors.New("poll error " + waitCanary)
			}
			return p, nil
		},
		Cancel: func(ctx context.Context, handle []byte) error {
			c.cancelled <- handle
			return errors.New("cancel error " + waitCanary)
		},
	}
}

// TestJobTelemetryThroughEngine drives external jobs through a real
// in-process engine on the fake clock, with the canary in each handle, poll
// error, failure class and output: a completed job, a failed one and a
// cancelled one. While the first waits, the gauges count it waiting and
// running but not in a slot, and the status page marks it; its span gets
// agentwork.work.waiting and one poll summary; the counter counts each
// poll by outcome; and the canary is nowhere.
func TestJobTelemetryThroughEngine(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(1))
	ctx, root := h.root()
	batch := work.Target{Label: "batch", Kind: work.KindFunction}

	// The job's events, as the Observer has seen them: once EventWaiting
	// or a poll's EventPolled arrives, the next poll's timer is armed.
	waits := make(chan observe.Event, 16)
	h.hook.set(func(e observe.Event) {
		if e.Type == observe.EventWaiting || e.Type == observe.EventPolled {
			waits <- e
		}
	})
	// run launches a job and answers its polls, advancing the clock past
	// each backoff delay, and returns the Work's id once every poll has
	// been answered; it calls during (if set) while the job waits before
	// its first poll.
	run := func(polls []work.Poll, during func(id string)) string {
		t.Helper()
		c := &canaryJob{polled: make(chan struct{}), polls: polls, cancelled: make(chan []byte, 1)}
		id, err := h.launch(ctx, batch, work.Spec{Job: c.job(), Input: "input " + waitCanary})
		if err != nil {
			t.Fatal(err)
		}
		if e := <-waits; e.Type != observe.EventWaiting || e.WorkID != id {
			t.Fatalf("first event %+v, want waiting", e)
		}
		if during != nil {
			during(id)
		}
		for i := range polls {
			h.clk.Advance(4 * time.Second) // the backoff's cap
			<-c.polled
			if e := <-waits; e.Type != observe.EventPolled || e.WorkID != id {
				t.Fatalf("poll %d: event %+v, want polled", i, e)
			}
		}
		return id
	}

	var gauges []string
	var html, js string
	done := run([]work.Poll{{State: work.PollWaiting}, {Class: "err"}, {State: work.PollWaiting, Progress: true},
		{State: work.PollDone, Output: "output " + waitCanary}}, func(id string) {
		for _, s := range series(h.collect()) {
			for _, p := range []string{"agentwork.work.waiting", "agentwork.work.slots_in_use", "agentwork.work.items{state=running"} {
				if strings.HasPrefix(s, p) {
					gauges = append(gauges, s)
				}
			}
		}
		html, js = statusPages(t, h)
	})
	diff(t, "gauges while the job waits", strings.Join(gauges, "\n"), strings.Join([]string{
		"agentwork.work.items{state=running,target=batch} 1",
		"agentwork.work.slots_in_use{target=batch} 0",
		"agentwork.work.waiting{target=batch} 1",
	}, "\n"))
	for _, want := range []string{`id="jobs-waiting">1</b>`, `id="slots-in-use" >0</b>`, `running (job waiting, no slot)`} {
		if !strings.Contains(html, want) {
			t.Errorf("status page lacks %q:\n%s", want, html)
		}
	}
	h.action(ctx, "result", done, func(ctx context.Context) (string, string) {
		st, out, err := h.s.Result(ctx, h.owner, done, work.MaxResultWait)
		if err != nil || st.State != work.StateCompleted || !strings.Contains(out, waitCanary) {
			t.Fatalf("result %v %q %v", st.State, out, err)
		}
		return "ok", ""
	})

	failed := run([]work.Poll{{State: work.PollFailed, Class: "quota_exceeded"}}, nil)
	h.await(failed, work.StateFailed)
	odd := run([]work.Poll{{State: work.PollFailed, Class: "failed: " + waitCanary}}, nil)
	h.await(odd, work.StateFailed)

	// Cancelled while it waits: Cancel gets the handle (and fails, with
	// the canary in its error).
	c := &canaryJob{polled: make(chan struct{}), cancelled: make(chan []byte, 1)}
	cancelled, err := h.launch(ctx, batch, work.Spec{Job: c.job(), Input: "input " + waitCanary})
	if err != nil {
		t.Fatal(err)
	}
	if e := <-waits; e.Type != observe.EventWaiting || e.WorkID != cancelled {
		t.Fatalf("event %+v, want waiting", e)
	}
	h.action(ctx, "cancel", cancelled, func(context.Context) (string, string) {
		if _, err := h.s.Cancel(ctx, h.owner, cancelled); err != nil {
			t.Fatal(err)
		}
		return "ok", ""
	})
	if hd := <-c.cancelled; !strings.Contains(string(hd), waitCanary) {
		t.Errorf("Cancel got handle %q", hd)
	}
	h.await(cancelled, work.StateCancelled)
	root.End()

	spans := renderSpans(h.spans.Ended())
	for _, want := range []string{
		"  event agentwork.work.waiting\n  event agentwork.work.polls {agentwork.job.polls.done=1 agentwork.job.polls.error=1 agentwork.job.polls.failed=0 agentwork.job.polls.waiting=2}\n  event agentwork.work.completed",
		"agentwork.job.polls=4 ",
		"event agentwork.work.polls {agentwork.job.polls.done=0 agentwork.job.polls.error=0 agentwork.job.polls.failed=1 agentwork.job.polls.waiting=0}\n  event agentwork.work.failed {agentwork.work.state=failed error.type=quota_exceeded}",
		"error.type=error gen_ai", // the engine keeps a class that is not one as error
	} {
		if !strings.Contains(spans, want) {
			t.Errorf("spans lack %q:\n%s", want, spans)
		}
	}
	var polls []string
	for _, s := range series(h.collect()) {
		if strings.HasPrefix(s, "agentwork.job.polls") {
			polls = append(polls, s)
		}
	}
	diff(t, "polls counter", strings.Join(polls, "\n"), strings.Join([]string{
		"agentwork.job.polls{outcome=done,target=batch} 1",
		"agentwork.job.polls{outcome=error,target=batch} 1",
		"agentwork.job.polls{outcome=failed,target=batch} 2",
		"agentwork.job.polls{outcome=waiting,target=batch} 2",
	}, "\n"))
	if !strings.Contains(h.logs.String(), `"polls.waiting":2,"polls.done":1,"polls.error":1`) {
		t.Errorf("the completed job's terminal line lacks its poll counts:\n%s", h.logs.String())
	}
	html2, js2 := statusPages(t, h)
	checkNoCanary(t, h, html, js, html2, js2)
}
