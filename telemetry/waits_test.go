package telemetry_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// waitEvents builds the events of one Work as an engine reports them.
type waitEvents struct {
	base  observe.Event
	at    time.Time
	state observe.State
}

func newWaitEvents(id, target string) *waitEvents {
	return &waitEvents{base: observe.Event{WorkID: id, Owner: "coordinator", Target: target, Kind: work.KindFunction}, at: epoch}
}

// next returns the next event of type typ, a second after the previous
// one; a transition (typ is a state) sets From and To.
func (w *waitEvents) next(typ observe.EventType, edit ...func(*observe.Event)) observe.Event {
	e := w.base
	e.Type, w.at = typ, w.at.Add(time.Second)
	e.Time = w.at
	for _, st := range observe.States {
		if observe.EventType(st) == typ {
			e.From, e.To = w.state, st
			w.state = st
		}
	}
	for _, f := range edit {
		f(&e)
	}
	return e
}

func polled(outcome string) func(*observe.Event) { return func(e *observe.Event) { e.Poll = outcome } }

const (
	jobID      = "0123456789abcdef0123456789abcde1"
	approvalID = "0123456789abcdef0123456789abcde2"
	deniedID   = "0123456789abcdef0123456789abcde3"
)

// TestWaitSpanEvents: a job's span gets agentwork.work.waiting and one
// summary of its polls by outcome (however many polls there were); a Work
// that needs approval gets approval_requested then approved or denied.
func TestWaitSpanEvents(t *testing.T) {
	h := newHarness(t)
	caller, root := h.root()
	defer root.End()

	job := newWaitEvents(jobID, "batch")
	q := job.next(observe.EventQueued)
	ctx := h.obs.Bind(caller, context.Background(), q)
	events := []observe.Event{q, job.next(observe.EventRunning), job.next(observe.EventWaiting)}
	const waitingPolls = 2900 // a day at the 30 s cap
	for range waitingPolls {
		events = append(events, job.next(observe.EventPolled, polled(observe.PollOutcomeWaiting)))
	}
	events = append(events, job.next(observe.EventPolled, polled(observe.PollOutcomeError)),
		job.next(observe.EventPolled, polled("free text "+canary)), // not a PollOutcome: counted as an error
		job.next(observe.EventPolled, polled(observe.PollOutcomeDone)),
		job.next(observe.EventCompleted, func(e *observe.Event) { e.Bytes = 12 }))
	for _, e := range events {
		h.obs.Event(ctx, e)
	}

	ok := newWaitEvents(approvalID, "deploy")
	q = ok.next(observe.EventQueued)
	actx := h.obs.Bind(caller, context.Background(), q)
	for _, e := range []observe.Event{q, ok.next(observe.EventApprovalRequested), ok.next(observe.EventApproved),
		ok.next(observe.EventRunning), ok.next(observe.EventCompleted)} {
		h.obs.Event(actx, e)
	}
	no := newWaitEvents(deniedID, "deploy")
	q = no.next(observe.EventQueued)
	dctx := h.obs.Bind(caller, context.Background(), q)
	for _, e := range []observe.Event{q, no.next(observe.EventApprovalRequested), no.next(observe.EventDenied),
		no.next(observe.EventCancelled, func(e *observe.Event) { e.ErrorClass = work.ClassDenied })} {
		h.obs.Event(dctx, e)
	}

	got := renderSpans(h.spans.Ended())
	want := `invoke_agent batch kind=internal parent=root trace=t1 links=[] status=Unset
  attrs {agentwork.job.polls=2903 agentwork.work.id=<id> agentwork.work.state=completed agentwork.work.target=batch gen_ai.agent.name=batch gen_ai.operation.name=invoke_agent}
  event agentwork.work.queued {agentwork.work.state=queued}
  event agentwork.work.running {agentwork.work.state=running}
  event agentwork.work.waiting
  event agentwork.work.polls {agentwork.job.polls.done=1 agentwork.job.polls.error=2 agentwork.job.polls.failed=0 agentwork.job.polls.waiting=2900}
  event agentwork.work.completed {agentwork.result.bytes=12 agentwork.work.state=completed}
invoke_agent deploy kind=internal parent=root trace=t2 links=[] status=Unset
  attrs {agentwork.work.id=<id> agentwork.work.state=completed agentwork.work.target=deploy gen_ai.agent.name=deploy gen_ai.operation.name=invoke_agent}
  event agentwork.work.queued {agentwork.work.state=queued}
  event agentwork.work.approval_requested
  event agentwork.work.approved
  event agentwork.work.running {agentwork.work.state=running}
  event agentwork.work.completed {agentwork.result.bytes=0 agentwork.work.state=completed}
invoke_agent deploy kind=internal parent=root trace=t3 links=[] status=Unset
  attrs {agentwork.work.id=<id> agentwork.work.state=cancelled agentwork.work.target=deploy gen_ai.agent.name=deploy gen_ai.operation.name=invoke_agent}
  event agentwork.work.queued {agentwork.work.state=queued}
  event agentwork.work.approval_requested
  event agentwork.work.denied
  event agentwork.work.cancelled {agentwork.work.state=cancelled}
`
	diff(t, "spans", got, want)
	if strings.Contains(got, "CANARY") {
		t.Error("a poll outcome's free text reached a span")
	}
	if n := telemetry.PollEntries(h.obs); n != 0 {
		t.Errorf("%d poll entries kept after the Works ended", n)
	}

	// The counter, by target and outcome; an outcome that is not one of
	// the four is _OTHER.
	var polls []string
	for _, s := range series(h.collect()) {
		if strings.HasPrefix(s, "agentwork.job.polls") {
			polls = append(polls, s)
		}
	}
	diff(t, "polls counter", strings.Join(polls, "\n"), strings.Join([]string{
		"agentwork.job.polls{outcome=_OTHER,target=batch} 1",
		"agentwork.job.polls{outcome=done,target=batch} 1",
		"agentwork.job.polls{outcome=error,target=batch} 1",
		"agentwork.job.polls{outcome=waiting,target=batch} 2900",
	}, "\n"))
}

// TestWaitReplay: a durable runner's replay counts the polls for the
// summary and records no metric.
func TestWaitReplay(t *testing.T) {
	h := newHarness(t)
	job := newWaitEvents(jobID, "batch")
	q := job.next(observe.EventQueued)
	ctx := h.obs.Bind(context.Background(), context.Background(), q)
	for _, e := range []observe.Event{q, job.next(observe.EventRunning), job.next(observe.EventWaiting),
		job.next(observe.EventPolled, polled(observe.PollOutcomeWaiting)), job.next(observe.EventPolled, polled(observe.PollOutcomeFailed)),
		job.next(observe.EventFailed, func(e *observe.Event) { e.ErrorClass = "job_failed" })} {
		h.obs.Replay(ctx, e)
	}
	got := renderSpans(h.spans.Ended())
	for _, want := range []string{"event agentwork.work.waiting\n",
		"event agentwork.work.polls {agentwork.job.polls.done=0 agentwork.job.polls.error=0 agentwork.job.polls.failed=1 agentwork.job.polls.waiting=1}\n",
		"agentwork.job.polls=2 "} {
		if !strings.Contains(got, want) {
			t.Errorf("replayed span lacks %q:\n%s", want, got)
		}
	}
	for _, s := range series(h.collect()) {
		if strings.HasPrefix(s, "agentwork.job.polls") {
			t.Errorf("replay counted a poll: %s", s)
		}
	}
	if n := telemetry.PollEntries(h.obs); n != 0 {
		t.Errorf("%d poll entries kept", n)
	}
}

// TestWaitLogLines: approval requested, approved and denied are Info
// lines; waiting is Debug; a poll writes no line; a job's terminal line
// carries its non-zero poll counts. All content-free.
func TestWaitLogLines(t *testing.T) {
	h := newHarness(t)
	job := newWaitEvents(jobID, "batch")
	for _, e := range []observe.Event{job.next(observe.EventQueued), job.next(observe.EventRunning), job.next(observe.EventWaiting),
		job.next(observe.EventPolled, polled(observe.PollOutcomeWaiting)), job.next(observe.EventPolled, polled(observe.PollOutcomeWaiting)),
		job.next(observe.EventPolled, polled(observe.PollOutcomeError)), job.next(observe.EventPolled, polled(observe.PollOutcomeDone)),
		job.next(observe.EventCompleted)} {
		h.obs.Event(context.Background(), e)
	}
	no := newWaitEvents(deniedID, "deploy")
	for _, e := range []observe.Event{no.next(observe.EventQueued), no.next(observe.EventApprovalRequested), no.next(observe.EventApproved),
		no.next(observe.EventRunning), no.next(observe.EventCancelRequested), no.next(observe.EventCancelled)} {
		h.obs.Event(context.Background(), e)
	}
	no = newWaitEvents(approvalID, "deploy")
	for _, e := range []observe.Event{no.next(observe.EventQueued), no.next(observe.EventApprovalRequested), no.next(observe.EventDenied),
		no.next(observe.EventCancelled, func(e *observe.Event) { e.ErrorClass = work.ClassDenied })} {
		h.obs.Event(context.Background(), e)
	}
	type line struct {
		Level, Msg string
		ID         string `json:"work.id"`
		State      string `json:"work.state"`
		Waiting    int    `json:"polls.waiting"`
		Done       int    `json:"polls.done"`
		Failed     *int   `json:"polls.failed"`
		Error      int    `json:"polls.error"`
		Poll       any    `json:"poll"`
		OwnerDepth *int   `json:"owner.depth"`
		WorkTarget string `json:"work.target"`
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(h.logs.String()), "\n") {
		var r line
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if r.OwnerDepth == nil || r.WorkTarget == "" || r.ID == "" {
			t.Errorf("line lacks the common fields: %s", l)
		}
		s := r.Level + " " + r.Msg + " " + r.State
		if r.Waiting+r.Done+r.Error > 0 || r.Failed != nil {
			s += " polls"
			for _, p := range []struct {
				k string
				n int
			}{{"waiting", r.Waiting}, {"done", r.Done}, {"error", r.Error}} {
				s += " " + p.k + "=" + strconv.Itoa(p.n)
			}
			if r.Failed != nil {
				s += " failed present"
			}
		}
		got = append(got, s)
	}
	diff(t, "log lines", strings.Join(got, "\n"), strings.Join([]string{
		"DEBUG agentwork.work.queued queued",
		"DEBUG agentwork.work.running running",
		"DEBUG agentwork.work.waiting ",
		"DEBUG agentwork.work.completed completed polls waiting=2 done=1 error=1",
		"DEBUG agentwork.work.queued queued",
		"INFO agentwork.work.approval_requested ",
		"INFO agentwork.work.approved ",
		"DEBUG agentwork.work.running running",
		"DEBUG agentwork.work.cancel_requested cancel-requested",
		"DEBUG agentwork.work.cancelled cancelled",
		"DEBUG agentwork.work.queued queued",
		"INFO agentwork.work.approval_requested ",
		"INFO agentwork.work.denied ",
		"DEBUG agentwork.work.cancelled cancelled",
	}, "\n"))
}

// fakeEngine is a Watched engine whose Snapshot the test sets.
type fakeEngine struct {
	mu   sync.Mutex
	snap observe.Snapshot
	err  error
}

func (f *fakeEngine) Snapshot(context.Context) (observe.Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.snap, f.err
}

func (f *fakeEngine) set(s observe.Snapshot, err error) {
	f.mu.Lock()
	f.snap, f.err = s, err
	f.mu.Unlock()
}

// waitSnapshot: target batch has two jobs waiting between polls (running,
// no slot) and one running in a slot; target deploy has two Works awaiting
// approval (requested 10 and 4 minutes ago) and one queued for a slot for
// 1 minute.
func waitSnapshot(now time.Time) observe.Snapshot {
	var batch, deploy [len(observe.States)]int
	batch[1], deploy[0] = 3, 3 // work.States: queued, running, ...
	lw := func(id, target string, st observe.State, created time.Time, waiting, approval bool) observe.LiveWork {
		w := observe.LiveWork{ID: id, Target: target, Owner: "coordinator", Kind: work.KindFunction, State: st, Attempt: 1,
			Created: created, Waiting: waiting, AwaitingApproval: approval}
		if st == work.StateRunning {
			w.Started = created.Add(time.Second)
		}
		return w
	}
	return observe.Snapshot{Time: now, MaxRunning: 4, SlotsInUse: 1, Queued: 1, Waiting: 2, AwaitingApproval: 2,
		Counts: []observe.TargetCounts{
			{Target: "batch", Counts: batch, Waiting: 2, SlotsInUse: 1},
			{Target: "deploy", Counts: deploy, AwaitingApproval: 2, OldestApproval: now.Add(-10 * time.Minute)},
		},
		Live: []observe.LiveWork{
			lw("0123456789abcdef0123456789abcd01", "deploy", work.StateQueued, now.Add(-10*time.Minute), false, true),
			lw("0123456789abcdef0123456789abcd02", "batch", work.StateRunning, now.Add(-8*time.Minute), true, false),
			lw("0123456789abcdef0123456789abcd03", "batch", work.StateRunning, now.Add(-6*time.Minute), true, false),
			lw("0123456789abcdef0123456789abcd04", "deploy", work.StateQueued, now.Add(-4*time.Minute), false, true),
			lw("0123456789abcdef0123456789abcd05", "batch", work.StateRunning, now.Add(-2*time.Minute), false, false),
			lw("0123456789abcdef0123456789abcd06", "deploy", work.StateQueued, now.Add(-1*time.Minute), false, false),
		}}
}

// TestWaitGauges: the wait gauges read the engines' Snapshots; Work
// awaiting approval counts as queued in agentwork_work_items but not in
// the oldest-queued age; waiting jobs count as running but not as slots.
func TestWaitGauges(t *testing.T) {
	h := newHarness(t)
	eng := &fakeEngine{}
	eng.set(waitSnapshot(epoch), nil)
	defer h.obs.Watch(eng)()
	var got []string
	for _, s := range series(h.collect()) {
		for _, p := range []string{"agentwork.work.waiting", "agentwork.work.awaiting_approval", "agentwork.work.oldest_approval_age",
			"agentwork.work.oldest_queued_age", "agentwork.work.slots_in_use", "agentwork.work.items{state=queued", "agentwork.work.items{state=running"} {
			if strings.HasPrefix(s, p) {
				got = append(got, s)
			}
		}
	}
	diff(t, "gauges", strings.Join(got, "\n"), strings.Join([]string{
		"agentwork.work.awaiting_approval{target=batch} 0",
		"agentwork.work.awaiting_approval{target=deploy} 2",
		"agentwork.work.items{state=queued,target=batch} 0",
		"agentwork.work.items{state=queued,target=deploy} 3",
		"agentwork.work.items{state=running,target=batch} 3",
		"agentwork.work.items{state=running,target=deploy} 0",
		"agentwork.work.oldest_approval_age{target=batch} 0",
		"agentwork.work.oldest_approval_age{target=deploy} 600",
		"agentwork.work.oldest_queued_age{target=batch} 0",
		"agentwork.work.oldest_queued_age{target=deploy} 60",
		"agentwork.work.slots_in_use{target=batch} 1",
		"agentwork.work.slots_in_use{target=deploy} 0",
		"agentwork.work.waiting{target=batch} 2",
		"agentwork.work.waiting{target=deploy} 0",
	}, "\n"))

	// Two engines add up; the oldest approval is the older of the two.
	other := &fakeEngine{}
	later := waitSnapshot(epoch)
	later.Counts[1].OldestApproval = epoch.Add(-20 * time.Minute)
	later.Live = nil
	other.set(later, nil)
	unwatch := h.obs.Watch(other)
	p := h.obs.Status()
	unwatch()
	if p.Waits != (telemetry.StatusWaits{Waiting: 4, AwaitingApproval: 4, OldestApprovalAgeSeconds: 1200}) {
		t.Errorf("two engines: waits %+v", p.Waits)
	}
}

// TestWaitStatusPage: the page shows the waiting jobs and the approvals
// pending (summary, per target and a marker per Work), as HTML and JSON.
func TestWaitStatusPage(t *testing.T) {
	h := newHarness(t)
	eng := &fakeEngine{}
	eng.set(waitSnapshot(epoch), nil)
	defer h.obs.Watch(eng)()
	p := h.obs.Status()
	if p.Waits != (telemetry.StatusWaits{Waiting: 2, AwaitingApproval: 2, OldestApprovalAgeSeconds: 600}) {
		t.Errorf("waits %+v", p.Waits)
	}
	if p.Queue != (telemetry.StatusQueue{Length: 1, OldestAgeSeconds: 60}) {
		t.Errorf("queue %+v (Work awaiting approval is not in it)", p.Queue)
	}
	var deploy telemetry.StatusTarget
	for _, tg := range p.Targets {
		if tg.Target == "deploy" {
			deploy = tg
		}
	}
	if deploy.AwaitingApproval != 2 || deploy.OldestApprovalAgeSeconds != 600 || deploy.Waiting != 0 || deploy.OldestQueuedAgeSeconds != 60 {
		t.Errorf("deploy %+v", deploy)
	}
	var marks []string
	for _, w := range p.Work {
		marks = append(marks, w.ID[30:]+" "+w.State+map[bool]string{true: " waiting"}[w.Waiting]+map[bool]string{true: " approval"}[w.AwaitingApproval])
	}
	diff(t, "rows", strings.Join(marks, "\n"), "01 queued approval\n02 running waiting\n03 running waiting\n04 queued approval\n05 running\n06 queued")

	srv := httptest.NewServer(h.obs.StatusHandler())
	defer srv.Close()
	get := func(path string) string {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		return string(b)
	}
	page := get("/")
	for _, want := range []string{`id="jobs-waiting">2</b>`, `id="awaiting-approval">2</b>`, `id="approval-oldest">10m0s</b>`,
		`id="queue-length">1</b>`, `id="queue-oldest">1m0s</b>`,
		`<td class="n" data-waits="waiting">2</td>`, `<td class="n" data-waits="awaiting-approval">2</td>`,
		`data-id="0123456789abcdef0123456789abcd01" data-state="queued"`, `queued (awaiting approval)`, `running (job waiting, no slot)`} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML lacks %q:\n%s", want, page)
		}
	}
	js := get("/?format=json")
	for _, want := range []string{`"waits": {`, `"awaitingApproval": 2`, `"oldestApprovalAgeSeconds": 600`, `"waiting": true`} {
		if !strings.Contains(js, want) {
			t.Errorf("JSON lacks %q:\n%s", want, js)
		}
	}
}

// TestPollEntriesForgotten: the poll counts of a Work that no watched
// engine holds any more (it ended in another process) are forgotten at
// the next census; those of live Work, and all of them while an engine's
// Snapshot fails, are kept.
func TestPollEntriesForgotten(t *testing.T) {
	h := newHarness(t)
	eng := &fakeEngine{}
	snap := waitSnapshot(epoch)
	eng.set(snap, nil)
	defer h.obs.Watch(eng)()
	live, gone := snap.Live[1].ID, "0123456789abcdef0123456789abcd99"
	for _, id := range []string{live, gone} {
		h.obs.Event(context.Background(), observe.Event{Type: observe.EventPolled, WorkID: id, Target: "batch", Poll: observe.PollOutcomeWaiting})
	}
	if n := telemetry.PollEntries(h.obs); n != 2 {
		t.Fatalf("%d poll entries, want 2", n)
	}
	eng.set(observe.Snapshot{}, context.DeadlineExceeded)
	h.obs.Status()
	if n := telemetry.PollEntries(h.obs); n != 2 {
		t.Errorf("after a failed Snapshot: %d poll entries, want 2", n)
	}
	eng.set(snap, nil)
	h.collect()
	if n := telemetry.PollEntries(h.obs); n != 1 {
		t.Errorf("after a census: %d poll entries, want 1 (the live job's)", n)
	}
}

// TestWaitOrphaned: a job that Shutdown abandons gets its poll summary
// before agentwork.work.orphaned ends its span, and its counts go.
func TestWaitOrphaned(t *testing.T) {
	h := newHarness(t)
	job := newWaitEvents(jobID, "batch")
	q := job.next(observe.EventQueued)
	ctx := h.obs.Bind(context.Background(), context.Background(), q)
	for _, e := range []observe.Event{q, job.next(observe.EventRunning), job.next(observe.EventWaiting),
		job.next(observe.EventPolled, polled(observe.PollOutcomeWaiting)), job.next(observe.EventPolled, polled(observe.PollOutcomeWaiting)),
		job.next(observe.EventOrphaned, func(e *observe.Event) { e.From, e.ErrorClass = work.StateRunning, work.ClassOrphaned })} {
		h.obs.Event(ctx, e)
	}
	got := renderSpans(h.spans.Ended())
	want := "  event agentwork.work.polls {agentwork.job.polls.done=0 agentwork.job.polls.error=0 agentwork.job.polls.failed=0 agentwork.job.polls.waiting=2}\n  event agentwork.work.orphaned {agentwork.work.state=running}\n"
	if !strings.Contains(got, want) || !strings.Contains(got, "agentwork.job.polls=2 ") {
		t.Errorf("span lacks %q:\n%s", want, got)
	}
	if n := telemetry.PollEntries(h.obs); n != 0 {
		t.Errorf("%d poll entries kept after the orphan", n)
	}
}
