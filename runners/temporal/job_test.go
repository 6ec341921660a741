package temporal_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

// fakeJobs is an external job service in memory: it counts submits per
// idempotency key, polls and cancels; answer scripts each poll (n counts
// the job's polls from 1).
type fakeJobs struct {
	mu      sync.Mutex
	submits map[string]int
	polls   int
	cancels [][]byte
	answer  func(n int) (work.Poll, error)
	polled  chan int // each poll's number, when not nil (never blocks)
}

func newFakeJobs(answer func(n int) (work.Poll, error)) *fakeJobs {
	return &fakeJobs{submits: map[string]int{}, answer: answer, polled: make(chan int, 4096)}
}

// fastBackoff keeps the tests' waits short.
var fastBackoff = work.Backoff{Initial: 20 * time.Millisecond, Max: 80 * time.Millisecond}

func (f *fakeJobs) job() *work.Job {
	return &work.Job{
		Submit: func(_ context.Context, key, input string) ([]byte, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.submits[key]++
			return []byte("handle:" + key + ":" + input), nil
		},
		Await: func(_ context.Context, h []byte) (work.Poll, error) {
			f.mu.Lock()
			f.polls++
			n := f.polls
			f.mu.Unlock()
			select {
			case f.polled <- n:
			default:
			}
			return f.answer(n)
		},
		Cancel: func(_ context.Context, h []byte) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.cancels = append(f.cancels, append([]byte(nil), h...))
			return nil
		},
		Backoff: fastBackoff,
	}
}

func (f *fakeJobs) counts() (submits map[string]int, polls int, cancels [][]byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := map[string]int{}
	for k, v := range f.submits {
		s[k] = v
	}
	return s, f.polls, append([][]byte(nil), f.cancels...)
}

// jobSpec is a Spec of the job target "batch" (the coordinator's
// declaration: Spec.Job with the test's backoff).
func jobSpec(o work.Owner, input string, j *work.Job) work.Spec {
	return work.Spec{Owner: o, Target: work.Target{Label: "batch", Kind: work.KindFunction}, Input: input,
		Job: &work.Job{Submit: j.Submit, Await: j.Await, Backoff: j.Backoff, MaxPollErrors: j.MaxPollErrors}}
}

func eventsOf(rec *enginetest.Recorder, id string) []observe.Event {
	var out []observe.Event
	for _, e := range rec.Events() {
		if e.WorkID == id {
			out = append(out, e)
		}
	}
	return out
}

func polledOutcomes(evs []observe.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Type == observe.EventPolled {
			out = append(out, e.Poll)
		}
	}
	return out
}

// TestJobCompletes: a job is submitted once (its key the Work id), waits
// through polls that answer waiting (the Work running, holding no slot:
// a second Work of a target with one slot runs meanwhile) and completes
// with the output of the poll that answers done.
func TestJobCompletes(t *testing.T) {
	held := make(chan struct{})
	f := newFakeJobs(func(n int) (work.Poll, error) {
		switch {
		case n == 3:
			<-held // the job waits here while the test looks
			return work.Poll{State: work.PollWaiting}, nil
		case n == 2:
			return work.Poll{State: work.PollWaiting, Progress: true}, nil
		case n < 4:
			return work.Poll{State: work.PollWaiting}, nil
		}
		return work.Poll{State: work.PollDone, Output: fmt.Sprint("done after ", n, " polls")}, nil
	})
	rec := &enginetest.Recorder{}
	ran := make(chan struct{})
	eng, _ := deploy(t, "job", map[string]temporal.Child{
		"batch": {Kind: work.KindFunction, Job: f.job()},
		"plain": {Kind: work.KindFunction, Run: func(context.Context, string) (string, error) { close(ran); return "plain", nil }},
	}, []temporal.Option{temporal.WithOptions(work.WithObserver(rec)), temporal.WithOptions(work.WithMaxRunning(1))}, nil)
	o := work.NewOwner(fmt.Sprintf("job-%d", time.Now().UnixNano()))
	ref, err := eng.Start(context.Background(), jobSpec(o, "in", f.job()))
	if err != nil {
		t.Fatal(err)
	}
	waitPolls(t, f, 3) // the third poll is held: the job waits
	st, err := eng.Status(t.Context(), o, ref.ID)
	if err != nil || st.State != work.StateRunning || !st.Waiting {
		t.Fatalf("Status while waiting = %+v, %v; want running, Waiting", st, err)
	}
	// The target has one running slot: the waiting job does not hold it.
	p, err := eng.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "plain", Kind: work.KindFunction},
		Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	<-ran
	if st, _ := settle(t, eng, o, p.ID); st.State != work.StateCompleted {
		t.Fatalf("the plain Work beside the waiting job: %s", st.State)
	}
	close(held)
	st, out := settle(t, eng, o, ref.ID)
	if st.State != work.StateCompleted || out != "done after 4 polls" || st.Waiting {
		t.Fatalf("job = %+v %q; want completed after 4 polls", st, out)
	}
	subs, polls, cancels := f.counts()
	if len(subs) != 1 || subs[ref.ID] != 1 || polls != 4 || len(cancels) != 0 {
		t.Fatalf("submits %v (want one, keyed %s), polls %d (want 4), cancels %d", subs, ref.ID, polls, len(cancels))
	}
	evs := eventsOf(rec, ref.ID)
	want := []observe.EventType{observe.EventQueued, observe.EventRunning, observe.EventWaiting, observe.EventPolled, observe.EventCompleted}
	if !inOrder(evs, want) {
		t.Fatalf("events %v lack %v in order", types(evs), want)
	}
	if got := polledOutcomes(dedupe(evs)); fmt.Sprint(got) != "[waiting waiting waiting done]" {
		t.Fatalf("poll outcomes %v", got)
	}
	// A worker that lost the workflow from its cache rebuilds it.
	if err := temporal.ReplayWork(workHistory(t, server(t), ref.ID), observe.NopObserver{}); err != nil {
		t.Fatalf("replaying the job's history: %v", err)
	}
}

func waitPolls(t *testing.T, f *fakeJobs, n int) {
	t.Helper()
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case got := <-f.polled:
			if got >= n {
				return
			}
		case <-timeout:
			t.Fatalf("no poll %d within 2 minutes", n)
		}
	}
}

// dedupe drops repeated deliveries (at least once: a repeated event has
// the same type, poll outcome and workflow time).
func dedupe(evs []observe.Event) []observe.Event {
	type key struct {
		t    observe.EventType
		poll string
		at   time.Time
	}
	seen := map[key]bool{}
	var out []observe.Event
	for _, e := range evs {
		k := key{e.Type, e.Poll, e.Time}
		if !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}

func inOrder(evs []observe.Event, want []observe.EventType) bool {
	i := 0
	for _, e := range evs {
		if i < len(want) && e.Type == want[i] {
			i++
		}
	}
	return i == len(want)
}

// TestJobCancel: cancelling a waiting job stops its wait and calls its
// Cancel once, with its handle; the Work ends cancelled.
func TestJobCancel(t *testing.T) {
	f := newFakeJobs(func(int) (work.Poll, error) { return work.Poll{State: work.PollWaiting}, nil })
	eng, _ := deploy(t, "jobcancel", map[string]temporal.Child{"batch": {Kind: work.KindFunction, Job: f.job()}}, nil, nil)
	o := work.NewOwner(fmt.Sprintf("jobcancel-%d", time.Now().UnixNano()))
	ref, err := eng.Start(context.Background(), jobSpec(o, "in", f.job()))
	if err != nil {
		t.Fatal(err)
	}
	waitPolls(t, f, 2)
	r, err := eng.Cancel(t.Context(), o, ref.ID)
	if err != nil || !r.Accepted || r.State != work.StateCancelRequested {
		t.Fatalf("Cancel = %+v, %v; want accepted, cancel-requested", r, err)
	}
	st, _ := settle(t, eng, o, ref.ID)
	if st.State != work.StateCancelled || st.Class != work.ClassCancelled {
		t.Fatalf("cancelled job = %+v", st)
	}
	if _, _, cancels := f.counts(); len(cancels) != 1 || string(cancels[0]) != "handle:"+ref.ID+":in" {
		t.Fatalf("Cancel calls %q; want one with the handle", cancels)
	}
}

// TestJobContinueAsNew: a job whose workflow continues as new every 3
// polls (WithPollsPerRun) keeps its handle, backoff and deadline: it is
// submitted once and completes after 10 polls, every run of its workflow
// after the first continued from the one before.
func TestJobContinueAsNew(t *testing.T) {
	f := newFakeJobs(func(n int) (work.Poll, error) {
		if n < 10 {
			return work.Poll{State: work.PollWaiting}, nil
		}
		return work.Poll{State: work.PollDone, Output: "ten"}, nil
	})
	rec := &enginetest.Recorder{}
	eng, _ := deploy(t, "jobcan", map[string]temporal.Child{"batch": {Kind: work.KindFunction, Job: f.job()}},
		[]temporal.Option{temporal.WithOptions(work.WithObserver(rec))}, []temporal.Option{temporal.WithPollsPerRun(3)})
	o := work.NewOwner(fmt.Sprintf("jobcan-%d", time.Now().UnixNano()))
	ref, err := eng.Start(context.Background(), jobSpec(o, "in", f.job()))
	if err != nil {
		t.Fatal(err)
	}
	st, out := settle(t, eng, o, ref.ID)
	if st.State != work.StateCompleted || out != "ten" {
		t.Fatalf("job = %+v %q", st, out)
	}
	subs, polls, _ := f.counts()
	if subs[ref.ID] != 1 || len(subs) != 1 || polls != 10 {
		t.Fatalf("submits %v, polls %d; want one submit and 10 polls", subs, polls)
	}
	it := server(t).GetWorkflowHistory(context.Background(), ref.ID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	first, err := it.Next()
	if err != nil {
		t.Fatal(err)
	}
	if first.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId() == "" {
		t.Fatal("the job's workflow never continued as new")
	}
	evs := dedupe(eventsOf(rec, ref.ID))
	n := 0
	for _, e := range evs {
		if e.Type == observe.EventQueued || e.Type == observe.EventWaiting || e.Type == observe.EventRunning {
			n++
		}
	}
	if n != 3 || len(polledOutcomes(evs)) != 10 {
		t.Fatalf("events %v: want queued, running and waiting once and 10 polls", types(evs))
	}
}

// TestJobEnds: a poll that answers failed fails the Work with its class;
// MaxPollErrors consecutive poll errors fail it with ClassError; a job
// that waits past its maximum duration fails with ClassDeadline, its
// Cancel called; a panic in Await fails it with ClassPanic, a failed
// poll's class that is not a class name with ClassError; a poll in a
// state Await does not know is waiting.
func TestJobEnds(t *testing.T) {
	cases := []struct {
		name   string
		answer func(int) (work.Poll, error)
		maxDur time.Duration
		class  string
		cancel int
	}{
		{"failed", func(n int) (work.Poll, error) {
			if n < 2 {
				return work.Poll{}, nil
			}
			return work.Poll{State: work.PollFailed, Class: "quota"}, nil
		}, 0, "quota", 0},
		{"failed-no-class", func(int) (work.Poll, error) { return work.Poll{State: work.PollFailed}, nil }, 0, work.ClassError, 0},
		{"poll-errors", func(n int) (work.Poll, error) {
			if n == 1 {
				return work.Poll{}, nil
			}
			return work.Poll{}, errors.New("unreachable")
		}, 0, work.ClassError, 0},
		{"deadline", func(int) (work.Poll, error) { return work.Poll{}, nil }, 2 * time.Second, work.ClassDeadline, 1},
		// As the in-process engine and Restate decide (driver.Await): a
		// panic in Await fails the Work as panic, not as a poll error;
		// a state Await does not know is waiting, not an error.
		{"await-panics", func(int) (work.Poll, error) { panic("await") }, 0, work.ClassPanic, 0},
		// Text in a class's place never becomes one (it would reach
		// telemetry): the Work fails as error.
		{"class-text", func(int) (work.Poll, error) {
			return work.Poll{State: work.PollFailed, Class: "Quota exceeded for account 42"}, nil
		}, 0, work.ClassError, 0},
		{"unknown-state", func(n int) (work.Poll, error) {
			if n < 5 {
				return work.Poll{State: work.PollState(7)}, nil
			}
			return work.Poll{State: work.PollFailed, Class: "quota"}, nil
		}, 0, "quota", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeJobs(tc.answer)
			var eopts []temporal.Option
			if tc.maxDur > 0 {
				eopts = append(eopts, temporal.WithOptions(work.WithDefaultBudget(work.Budget{MaxDuration: tc.maxDur})))
			}
			eng, _ := deploy(t, "jobend", map[string]temporal.Child{"batch": {Kind: work.KindFunction, Job: f.job()}}, nil, eopts)
			o := work.NewOwner(fmt.Sprintf("jobend-%d", time.Now().UnixNano()))
			ref, err := eng.Start(context.Background(), jobSpec(o, "in", f.job()))
			if err != nil {
				t.Fatal(err)
			}
			st, _ := settle(t, eng, o, ref.ID)
			if st.State != work.StateFailed || st.Class != tc.class {
				t.Fatalf("job = %s %q; want failed %q", st.State, st.Class, tc.class)
			}
			if _, polls, cancels := f.counts(); len(cancels) != tc.cancel {
				t.Fatalf("%d Cancel calls after %d polls, want %d", len(cancels), polls, tc.cancel)
			}
		})
	}
}

// TestJobWorkerMisuse: NewWorker refuses a Child with both a Run and a
// Job, an agent job and an invalid Job (work.ErrInvalidSpec).
func TestJobWorkerMisuse(t *testing.T) {
	f := newFakeJobs(nil)
	run := func(context.Context, string) (string, error) { return "", nil }
	for name, c := range map[string]temporal.Child{
		"both":     {Kind: work.KindFunction, Run: run, Job: f.job()},
		"agent":    {Kind: work.KindAgent, Job: f.job()},
		"no-await": {Kind: work.KindFunction, Job: &work.Job{Submit: f.job().Submit}},
		"backoff":  {Kind: work.KindFunction, Job: &work.Job{Submit: f.job().Submit, Await: f.job().Await, Backoff: work.Backoff{Initial: time.Minute, Max: time.Second}}},
		"neither":  {Kind: work.KindFunction},
	} {
		if _, err := temporal.NewWorker(client.Client(nil), map[string]temporal.Child{"x": c}); !errors.Is(err, work.ErrInvalidSpec) {
			t.Errorf("%s: NewWorker = %v, want ErrInvalidSpec", name, err)
		}
	}
}

// TestJobWaitHoldsNothing: between polls a job's workflow has no
// activity scheduled or running (a workflow timer only: no heartbeat, no
// worker slot); a cancel stops the timer at once and cancels the job.
func TestJobWaitHoldsNothing(t *testing.T) {
	f := newFakeJobs(func(int) (work.Poll, error) { return work.Poll{State: work.PollWaiting}, nil })
	j := f.job()
	j.Backoff = work.Backoff{Initial: time.Hour, Max: time.Hour}
	rec := &enginetest.Recorder{}
	eng, _ := deploy(t, "jobidle", map[string]temporal.Child{"batch": {Kind: work.KindFunction, Job: j}},
		[]temporal.Option{temporal.WithOptions(work.WithObserver(rec))}, nil)
	o := work.NewOwner(fmt.Sprintf("jobidle-%d", time.Now().UnixNano()))
	ref, err := eng.Start(context.Background(), jobSpec(o, "in", j))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the job's wait", func() bool { return hasEvent(rec, ref.ID, observe.EventWaiting) })
	if n := pendingActivities(t, server(t), ref.ID); n != 0 {
		t.Fatalf("a waiting job has %d pending activities", n)
	}
	// The registry learns of the wait just after the event (the workflow
	// emits it, then tells the owner's registry): Status shows it soon.
	eventually(t, "Status of the waiting job", func() bool {
		st, err := eng.Status(t.Context(), o, ref.ID)
		return err == nil && st.State == work.StateRunning && st.Waiting
	})
	if _, err := eng.Cancel(t.Context(), o, ref.ID); err != nil {
		t.Fatal(err)
	}
	if st, _ := settle(t, eng, o, ref.ID); st.State != work.StateCancelled {
		t.Fatalf("cancelled waiting job: %s", st.State)
	}
	if subs, polls, cancels := f.counts(); subs[ref.ID] != 1 || polls != 0 || len(cancels) != 1 {
		t.Fatalf("submits %v, polls %d, cancels %d; want 1, 0, 1", subs, polls, len(cancels))
	}
}

// TestJobSpanAcrossRuns: a job whose workflow continues as new on the
// same Worker keeps one invoke_agent span, from queued to completed
// (its context stays with the Worker between the runs).
func TestJobSpanAcrossRuns(t *testing.T) {
	f := newFakeJobs(func(n int) (work.Poll, error) {
		if n < 7 {
			return work.Poll{State: work.PollWaiting}, nil
		}
		return work.Poll{State: work.PollDone, Output: "seven"}, nil
	})
	tel := newObserved(t, nil)
	eng, _ := deploy(t, "jobspan", map[string]temporal.Child{"batch": {Kind: work.KindFunction, Job: f.job()}},
		[]temporal.Option{temporal.WithOptions(work.WithObserver(tel.obs))}, []temporal.Option{temporal.WithPollsPerRun(3)})
	o := work.NewOwner(fmt.Sprintf("jobspan-%d", time.Now().UnixNano()))
	ref, err := eng.Start(context.Background(), jobSpec(o, "in", f.job()))
	if err != nil {
		t.Fatal(err)
	}
	if st, out := settle(t, eng, o, ref.ID); st.State != work.StateCompleted || out != "seven" {
		t.Fatalf("job = %+v %q", st, out)
	}
	var spans []string
	eventually(t, "the job's span", func() bool { return len(invokeSpans(tel.spans.Ended(), ref.ID)) > 0 })
	for _, s := range invokeSpans(tel.spans.Ended(), ref.ID) {
		var evs []string
		for _, e := range s.Events() {
			evs = append(evs, e.Name)
		}
		spans = append(spans, fmt.Sprint(evs))
	}
	if len(spans) != 1 || !strings.Contains(spans[0], "agentwork.work.queued") || !strings.Contains(spans[0], "agentwork.work.completed") {
		t.Fatalf("the job's spans: %v; want one, queued to completed", spans)
	}
}

// TestJobDeadlineReplays: past its deadline a job's Work fails
// deadline_exceeded whatever a poll answers after it (the held first poll
// answers done then; the job, finished at its service, is not cancelled)
// and no poll starts after a Submit that returned its handle late (the
// job is cancelled once); each history records the deadline rule's
// version and replays.
func TestJobDeadlineReplays(t *testing.T) {
	const maxDur = 2 * time.Second
	gate := make(chan struct{})
	polled, submitted := make(chan struct{}, 8), make(chan struct{}, 8)
	var release sync.Once
	open := func() { release.Do(func() { close(gate) }) }
	t.Cleanup(open)
	f := newFakeJobs(nil)
	j := f.job()
	submit := j.Submit
	j.Submit = func(ctx context.Context, key, input string) ([]byte, error) {
		if input == "late-submit" {
			submitted <- struct{}{}
			<-gate
		}
		return submit(ctx, key, input)
	}
	j.Await = func(_ context.Context, h []byte) (work.Poll, error) {
		polled <- struct{}{}
		<-gate
		return work.Poll{State: work.PollDone, Output: "late"}, nil
	}
	eng, _ := deploy(t, "jobdeadline", map[string]temporal.Child{"batch": {Kind: work.KindFunction, Job: j}}, nil,
		[]temporal.Option{temporal.WithOptions(work.WithDefaultBudget(work.Budget{MaxDuration: maxDur}))})
	o := work.NewOwner(fmt.Sprintf("jobdeadline-%d", time.Now().UnixNano()))
	late, err := eng.Start(context.Background(), jobSpec(o, "late-answer", j))
	if err != nil {
		t.Fatal(err)
	}
	slow, err := eng.Start(context.Background(), jobSpec(o, "late-submit", j))
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range []chan struct{}{polled, submitted} {
		select {
		case <-ch:
		case <-time.After(time.Minute):
			t.Fatal("the first poll or the held Submit did not start")
		}
	}
	// Both Works started running before now: maxDur from here is past
	// both deadlines (the dev server reads this machine's clock).
	tm := time.NewTimer(maxDur)
	<-tm.C
	open()
	c := server(t)
	for _, id := range []string{late.ID, slow.ID} {
		st, out := settle(t, eng, o, id)
		if st.State != work.StateFailed || st.Class != work.ClassDeadline || out != "" {
			t.Errorf("%s: %s %q with %q; want failed %q", id, st.State, st.Class, out, work.ClassDeadline)
		}
		h := workHistory(t, c, id)
		if !strings.Contains(fmt.Sprint(h.Events), temporal.JobDeadlineChange) {
			t.Errorf("%s: the history records no %s marker", id, temporal.JobDeadlineChange)
		}
		if err := temporal.ReplayWork(h, observe.NopObserver{}); err != nil {
			t.Errorf("%s: replay: %v", id, err)
		}
	}
	if _, _, cancels := f.counts(); len(cancels) != 1 || !strings.Contains(string(cancels[0]), "late-submit") {
		t.Errorf("Cancel called with %q; want once, for the late-submit job", cancels)
	}
	select {
	case <-polled: // a second poll: of the late-submit job, or after the deadline
		t.Errorf("a poll started past the deadline")
	default:
	}
}
