package work_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwork/agentwork/internal/fakeclock"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// jobTarget is the label of the tests' external jobs.
var jobTarget = work.Target{Label: "batch", Kind: work.KindFunction}

// testJob is an external job the test answers: each Await (and, when
// holdSubmit is set, each Submit) hands the test a call to answer.
type testJob struct {
	holdSubmit bool
	stubborn   bool // a held Submit returns what the test answers, whatever its context
	submits    chan *jobCall
	awaits     chan *jobCall
	mu         sync.Mutex
	keys       []string
	inputs     []string
	cancels    [][]byte
	awaited    int // Await calls made
}

// jobCall is one Submit or Await in progress.
type jobCall struct {
	ctx    context.Context
	handle []byte
	reply  chan jobReply
}

type jobReply struct {
	handle []byte
	poll   work.Poll
	err    error
	panics bool
}

func newTestJob() *testJob {
	return &testJob{submits: make(chan *jobCall), awaits: make(chan *jobCall)}
}

// call hands c to the test on ch and returns its answer, or ctx's error
// when ctx ends first.
func call(ctx context.Context, ch chan *jobCall, c *jobCall) (jobReply, error) {
	select {
	case ch <- c:
	case <-ctx.Done():
		return jobReply{}, ctx.Err()
	}
	select {
	case r := <-c.reply:
		if r.panics {
			panic("job " + canary)
		}
		return r, nil
	case <-ctx.Done():
		return jobReply{}, ctx.Err()
	}
}

func (j *testJob) job() *work.Job {
	return &work.Job{
		Submit: func(ctx context.Context, key, input string) ([]byte, error) {
			j.mu.Lock()
			j.keys, j.inputs = append(j.keys, key), append(j.inputs, input)
			j.mu.Unlock()
			h := []byte("handle-" + key + " " + canary)
			if !j.holdSubmit {
				return h, nil
			}
			c := &jobCall{ctx: ctx, handle: h, reply: make(chan jobReply, 1)}
			if j.stubborn {
				j.submits <- c
				r := <-c.reply
				return r.handle, r.err
			}
			r, err := call(ctx, j.submits, c)
			if err != nil {
				return nil, err
			}
			return r.handle, r.err
		},
		Await: func(ctx context.Context, h []byte) (work.Poll, error) {
			j.mu.Lock()
			j.awaited++
			j.mu.Unlock()
			r, err := call(ctx, j.awaits, &jobCall{ctx: ctx, handle: h, reply: make(chan jobReply, 1)})
			if err != nil {
				return work.Poll{}, err
			}
			return r.poll, r.err
		},
		Cancel: func(_ context.Context, h []byte) error {
			j.mu.Lock()
			j.cancels = append(j.cancels, bytes.Clone(h))
			j.mu.Unlock()
			return nil
		},
	}
}

func (j *testJob) cancelCalls() [][]byte {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([][]byte(nil), j.cancels...)
}

// startJob starts a job Work of o with input and waits until it waits.
func (h *harness) startJob(o work.Owner, j *work.Job, input string) work.Ref {
	h.t.Helper()
	ref, err := h.s.Start(context.Background(), work.Spec{Owner: o, Target: jobTarget, Job: j, Input: input})
	if err != nil {
		h.t.Fatalf("Start: %v", err)
	}
	return ref
}

func (h *harness) waitType(id string, typ observe.EventType, n int) []observe.Event {
	return h.obs.wait(id, func(evs []observe.Event) bool {
		c := 0
		for _, e := range evs {
			if e.Type == typ {
				c++
			}
		}
		return c >= n
	})
}

// advancePoll moves the clock by d, requiring that no timer fires before d
// and that one (the poll's) fires at d, and returns the poll's call.
func (h *harness) advancePoll(j *testJob, d time.Duration) *jobCall {
	h.t.Helper()
	p := h.clk.Pending()
	h.clk.Advance(d - time.Millisecond)
	if got := h.clk.Pending(); got != p {
		h.t.Fatalf("a timer fired %v early (%d pending, was %d)", time.Millisecond, got, p)
	}
	h.clk.Advance(time.Millisecond)
	if got := h.clk.Pending(); got != p-1 {
		h.t.Fatalf("the poll timer did not fire after %v (%d pending, was %d)", d, got, p)
	}
	return <-j.awaits
}

func (c *jobCall) answer(r jobReply) { c.reply <- r }

func jobTrace(evs []observe.Event) []string {
	var out []string
	for _, e := range evs {
		switch e.Type {
		case observe.EventPolled:
			out = append(out, "polled:"+e.Poll)
		case observe.EventProgress, observe.EventUsage:
		default:
			out = append(out, string(e.Type))
		}
	}
	return out
}

// TestJobLifecycle: Submit gets the Work's id as key and its input; the
// Work waits running with Status.Waiting and no slot; polls come after
// 1 s, 2 s, 4 s (doubling), back to 1 s after progress; the done answer
// completes it with the exact output; the events come in order.
func TestJobLifecycle(t *testing.T) {
	h := newHarness(t)
	j := newTestJob()
	o := work.NewOwner("o")
	ref := h.startJob(o, j.job(), "the input "+canary)
	h.waitType(ref.ID, observe.EventWaiting, 1)
	st := h.status(o, ref.ID)
	if st.State != work.StateRunning || !st.Waiting {
		t.Fatalf("state %s waiting %v, want running and waiting", st.State, st.Waiting)
	}
	snap, _ := h.s.Snapshot(context.Background())
	if snap.SlotsInUse != 0 || snap.Waiting != 1 || len(snap.Live) != 1 || !snap.Live[0].Waiting {
		t.Fatalf("snapshot: %d slots, %d waiting, live %+v; want 0 slots and the job waiting", snap.SlotsInUse, snap.Waiting, snap.Live)
	}
	for _, c := range snap.Counts {
		if c.Target == jobTarget.Label && c.Waiting != 1 {
			t.Fatalf("target counts %+v, want 1 waiting", c)
		}
	}
	for i, step := range []struct {
		delay time.Duration
		poll  work.Poll
		err   error
	}{
		{time.Second, work.Poll{State: work.PollWaiting}, nil},
		{2 * time.Second, work.Poll{State: work.PollWaiting}, nil},
		{4 * time.Second, work.Poll{State: work.PollWaiting, Progress: true}, nil},
		{time.Second, work.Poll{}, errors.New("transient " + canary)},
		{2 * time.Second, work.Poll{State: work.PollWaiting}, nil},
		{4 * time.Second, work.Poll{State: work.PollDone, Output: "out " + canary}, nil},
	} {
		c := h.advancePoll(j, step.delay)
		if !bytes.Equal(c.handle, []byte("handle-"+ref.ID+" "+canary)) {
			t.Fatalf("poll %d: handle %q", i, c.handle)
		}
		c.answer(jobReply{poll: step.poll, err: step.err})
		h.waitType(ref.ID, observe.EventPolled, i+1)
	}
	if ev := h.obs.waitTerminal(ref.ID); ev.Type != observe.EventCompleted {
		t.Fatalf("terminal %s", ev.Type)
	}
	st, out, _ := h.s.Result(context.Background(), o, ref.ID, 0)
	if st.State != work.StateCompleted || out != "out "+canary || st.Waiting {
		t.Fatalf("result %s %q waiting %v", st.State, out, st.Waiting)
	}
	j.mu.Lock()
	keys, inputs := j.keys, j.inputs
	j.mu.Unlock()
	if len(keys) != 1 || keys[0] != ref.ID || inputs[0] != "the input "+canary {
		t.Fatalf("Submit keys %q inputs %q", keys, inputs)
	}
	want := "[queued running waiting polled:waiting polled:waiting polled:waiting polled:error polled:waiting polled:done completed result-read]"
	if got := fmt.Sprint(jobTrace(h.obs.events(ref.ID))); got != want {
		t.Fatalf("events %s\nwant   %s", got, want)
	}
	if dump := fmt.Sprintf("%#v", h.obs.events(ref.ID)); strings.Contains(dump, canary) {
		t.Fatalf("an event carries content: %s", dump)
	}
	if n := h.clk.Pending(); n != 0 {
		t.Fatalf("%d timers left after the job completed", n)
	}
}

// TestJobBackoffCap: with the defaults the delay doubles up to 30 s and
// stays there.
func TestJobBackoffCap(t *testing.T) {
	h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	j := newTestJob()
	o := work.NewOwner("o")
	ref := h.startJob(o, j.job(), "in")
	h.waitType(ref.ID, observe.EventWaiting, 1)
	for i, d := range []time.Duration{1, 2, 4, 8, 16, 30, 30} {
		h.advancePoll(j, d*time.Second).answer(jobReply{poll: work.Poll{State: work.PollWaiting}})
		h.waitType(ref.ID, observe.EventPolled, i+1)
	}
}

// TestJobGivesBackItsSlot: a job holds a running slot only while its
// Submit runs: the Work queued behind it runs once it waits.
func TestJobGivesBackItsSlot(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(1))
	j := newTestJob()
	j.holdSubmit = true
	o := work.NewOwner("o")
	ref := h.startJob(o, j.job(), "in")
	sub := <-j.submits
	c := h.child()
	next := h.start(o, fn, c)
	if st := h.status(o, next.ID); st.State != work.StateQueued {
		t.Fatalf("the Work behind the submitting job is %s, want queued", st.State)
	}
	if st := h.status(o, ref.ID); st.Waiting {
		t.Fatalf("a job whose Submit runs reports Waiting")
	}
	sub.answer(jobReply{handle: sub.handle})
	<-c.started
	snap, _ := h.s.Snapshot(context.Background())
	if snap.SlotsInUse != 1 || snap.Waiting != 1 {
		t.Fatalf("snapshot: %d slots in use, %d waiting; want 1 (the child) and 1", snap.SlotsInUse, snap.Waiting)
	}
	c.complete("x")
	h.obs.waitTerminal(next.ID)
}

// TestJobPollBound: a target's polls run at most MaxPolls at once; a due
// poll beyond it waits in the bound's FIFO list and starts as one ends.
func TestJobPollBound(t *testing.T) {
	h := newHarness(t)
	j := newTestJob()
	spec := j.job()
	spec.MaxPolls = 1
	o := work.NewOwner("o")
	a := h.startJob(o, spec, "a")
	h.waitType(a.ID, observe.EventWaiting, 1)
	b := h.startJob(o, spec, "b")
	h.waitType(b.ID, observe.EventWaiting, 1)
	h.clk.Advance(time.Second) // both are due
	if running, due := h.s.PollBoundForTest(jobTarget.Label); running != 1 || due != 1 {
		t.Fatalf("poll bound: %d running, %d due; want 1 and 1", running, due)
	}
	first := <-j.awaits
	first.answer(jobReply{poll: work.Poll{State: work.PollDone, Output: "one"}})
	second := <-j.awaits
	if bytes.Equal(first.handle, second.handle) {
		t.Fatal("the same job polled twice")
	}
	second.answer(jobReply{poll: work.Poll{State: work.PollDone, Output: "two"}})
	h.obs.waitTerminal(a.ID)
	h.obs.waitTerminal(b.ID)
	if running, due := h.s.PollBoundForTest(jobTarget.Label); running != 0 || due != 0 {
		t.Fatalf("poll bound after: %d running, %d due", running, due)
	}
}

// TestJobEnds: how the polls' answers end a job's Work.
func TestJobEnds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    []work.Option
		replies []jobReply
		state   observe.State
		class   string
	}{
		{"failed with its class", nil, []jobReply{{poll: work.Poll{State: work.PollFailed, Class: "quota"}}}, work.StateFailed, "quota"},
		{"failed without a class", nil, []jobReply{{poll: work.Poll{State: work.PollFailed}}}, work.StateFailed, work.ClassError},
		{"failed with text for a class", nil, []jobReply{{poll: work.Poll{State: work.PollFailed, Class: "Bad " + canary}}}, work.StateFailed, work.ClassError},
		{"poll errors in a row", nil, []jobReply{{err: errBoom}, {poll: work.Poll{State: work.PollWaiting}}, {err: errBoom}, {err: errBoom}, {err: errBoom}}, work.StateFailed, work.ClassError},
		{"poll panics", nil, []jobReply{{panics: true}}, work.StateFailed, work.ClassPanic},
		{"output too large", []work.Option{work.WithMaxResultBytes(8)}, []jobReply{{poll: work.Poll{State: work.PollDone, Output: "123456789"}}}, work.StateFailed, work.ClassResultTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.opts...)
			j := newTestJob()
			o := work.NewOwner("o")
			ref := h.startJob(o, j.job(), "in")
			h.waitType(ref.ID, observe.EventWaiting, 1)
			for i, r := range tc.replies {
				h.clk.Advance(time.Minute)
				(<-j.awaits).answer(r)
				if i < len(tc.replies)-1 {
					h.waitType(ref.ID, observe.EventPolled, i+1)
				}
			}
			ev := h.obs.waitTerminal(ref.ID)
			st := h.status(o, ref.ID)
			if st.State != tc.state || st.Class != tc.class || ev.ErrorClass != tc.class {
				t.Fatalf("ended %s class %q (event %q), want %s %q", st.State, st.Class, ev.ErrorClass, tc.state, tc.class)
			}
			if n := len(j.cancelCalls()); n != 0 {
				t.Fatalf("Cancel called %d times", n)
			}
		})
	}
}

// TestJobCancel: cancelling a job in each phase ends it cancelled; Cancel
// is called once with the handle when the job was submitted.
func TestJobCancel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hold   string // "": Submit returns at once; "held"; "stubborn"
		setup  func(h *harness, j *testJob, ref work.Ref) func()
		cancel bool // Job.Cancel is called
	}{
		{"waiting between polls", "", func(h *harness, j *testJob, ref work.Ref) func() {
			h.waitType(ref.ID, observe.EventWaiting, 1)
			return nil
		}, true},
		{"during a poll", "", func(h *harness, j *testJob, ref work.Ref) func() {
			h.waitType(ref.ID, observe.EventWaiting, 1)
			h.clk.Advance(time.Second)
			<-j.awaits // answers nothing: the poll's context ends
			return nil
		}, true},
		{"during Submit, which returns its handle", "stubborn", func(h *harness, j *testJob, ref work.Ref) func() {
			c := <-j.submits
			return func() { <-c.ctx.Done(); c.answer(jobReply{handle: c.handle}) }
		}, true},
		{"during Submit, which gives up", "held", func(h *harness, j *testJob, ref work.Ref) func() {
			<-j.submits // returns its context's error
			return nil
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			j := newTestJob()
			j.holdSubmit, j.stubborn = tc.hold != "", tc.hold == "stubborn"
			o := work.NewOwner("o")
			ref := h.startJob(o, j.job(), "in")
			after := tc.setup(h, j, ref)
			r, err := h.s.Cancel(context.Background(), o, ref.ID)
			if err != nil || !r.Accepted || r.State != work.StateCancelRequested {
				t.Fatalf("Cancel: %+v %v", r, err)
			}
			if after != nil {
				after()
			}
			ev := h.obs.waitTerminal(ref.ID)
			if ev.Type != observe.EventCancelled || ev.ErrorClass != work.ClassCancelled {
				t.Fatalf("terminal %s %q", ev.Type, ev.ErrorClass)
			}
			cancels := j.cancelCalls()
			want := 0
			if tc.cancel {
				want = 1
			}
			if len(cancels) != want || (want == 1 && !bytes.Equal(cancels[0], []byte("handle-"+ref.ID+" "+canary))) {
				t.Fatalf("Cancel calls %q, want %d with the handle", cancels, want)
			}
			if n := h.clk.Pending(); n != 0 {
				t.Fatalf("%d timers left", n)
			}
		})
	}
}

// TestJobCancelDue: a job whose poll waits for the bound is cancelled at
// once; the bound's next poll skips it.
func TestJobCancelDue(t *testing.T) {
	h := newHarness(t)
	j := newTestJob()
	spec := j.job()
	spec.MaxPolls = 1
	o := work.NewOwner("o")
	a := h.startJob(o, spec, "a")
	h.waitType(a.ID, observe.EventWaiting, 1)
	b := h.startJob(o, spec, "b")
	h.waitType(b.ID, observe.EventWaiting, 1)
	h.clk.Advance(time.Second)
	first := <-j.awaits
	due := b
	if bytes.Contains(first.handle, []byte(b.ID)) {
		due = a
	}
	if _, err := h.s.Cancel(context.Background(), o, due.ID); err != nil {
		t.Fatal(err)
	}
	if ev := h.obs.waitTerminal(due.ID); ev.Type != observe.EventCancelled {
		t.Fatalf("terminal %s", ev.Type)
	}
	first.answer(jobReply{poll: work.Poll{State: work.PollWaiting}})
	if _, due := h.s.PollBoundForTest(jobTarget.Label); due != 0 {
		t.Fatalf("%d due after the cancel", due)
	}
	if n := len(j.cancelCalls()); n != 1 {
		t.Fatalf("Cancel called %d times", n)
	}
}

// TestJobDeadline: a job that waits past its maximum duration fails with
// deadline_exceeded, and Cancel is called once.
func TestJobDeadline(t *testing.T) {
	h := newHarness(t)
	j := newTestJob()
	o := work.NewOwner("o")
	ref, err := h.s.Start(context.Background(), work.Spec{Owner: o, Target: jobTarget, Job: j.job(),
		Budget: work.Budget{MaxDuration: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	h.waitType(ref.ID, observe.EventWaiting, 1)
	for i, d := range []time.Duration{1, 2, 4} {
		h.advancePoll(j, d*time.Second).answer(jobReply{poll: work.Poll{State: work.PollWaiting}})
		h.waitType(ref.ID, observe.EventPolled, i+1)
	}
	h.clk.Advance(3 * time.Second) // 10 s: the deadline, before the next poll (at 15 s)
	ev := h.obs.waitTerminal(ref.ID)
	if ev.Type != observe.EventFailed || ev.ErrorClass != work.ClassDeadline {
		t.Fatalf("terminal %s %q", ev.Type, ev.ErrorClass)
	}
	if n := len(j.cancelCalls()); n != 1 {
		t.Fatalf("Cancel called %d times", n)
	}
	if n := h.clk.Pending(); n != 0 {
		t.Fatalf("%d timers left", n)
	}
}

// TestJobPollAtDeadline: a poll that falls due at the deadline's instant
// does not start (driver.PastDeadline's rule, as on the durable engines):
// the Work fails deadline_exceeded with no Await call, whichever of the
// two timers runs first.
func TestJobPollAtDeadline(t *testing.T) {
	for i := range 50 { // the two timers' callbacks race for the lock
		clk := fakeclock.New(t0)
		h := newHarness(t, work.WithClock(asyncClock{clk}))
		h.clk = clk
		j := newTestJob()
		o := work.NewOwner("o")
		ref, err := h.s.Start(context.Background(), work.Spec{Owner: o, Target: jobTarget, Job: jobWith(j.job(), time.Second),
			Budget: work.Budget{MaxDuration: time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		h.waitType(ref.ID, observe.EventWaiting, 1)
		h.clk.Advance(time.Second) // the first poll and the deadline, at once
		ev := h.obs.waitTerminal(ref.ID)
		if ev.Type != observe.EventFailed || ev.ErrorClass != work.ClassDeadline {
			t.Fatalf("run %d: terminal %s %q", i, ev.Type, ev.ErrorClass)
		}
		j.mu.Lock()
		n := j.awaited
		j.mu.Unlock()
		if n != 0 {
			t.Fatalf("run %d: %d polls started at the deadline", i, n)
		}
		if err := h.s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// asyncClock runs each timer's function on a goroutine of its own, as
// the system clock does, so that timers falling due at once race.
type asyncClock struct{ *fakeclock.Clock }

func (c asyncClock) AfterFunc(d time.Duration, f func()) func() bool {
	return c.Clock.AfterFunc(d, func() { go f() })
}

// jobWith returns j with its backoff starting at initial.
func jobWith(j *work.Job, initial time.Duration) *work.Job {
	j.Backoff = work.Backoff{Initial: initial}
	return j
}

// TestJobReleaseCloseShutdown: Release, Close and Shutdown stop a waiting
// job as Cancel does: Job.Cancel once, then cancelled.
func TestJobReleaseCloseShutdown(t *testing.T) {
	for _, end := range []string{"release", "close", "shutdown"} {
		t.Run(end, func(t *testing.T) {
			h := newHarness(t)
			j := newTestJob()
			o := work.NewOwner("o")
			ref := h.startJob(o, j.job(), "in")
			h.waitType(ref.ID, observe.EventWaiting, 1)
			ctx := context.Background()
			switch end {
			case "release":
				if err := h.s.Release(ctx, o); err != nil {
					t.Fatal(err)
				}
			case "close":
				if err := h.s.Close(ctx); err != nil {
					t.Fatal(err)
				}
			case "shutdown":
				done, cancel := context.WithCancel(ctx)
				cancel() // nothing is drained: the wait stops at once
				rep, err := h.s.Shutdown(done)
				if err != nil || rep.Drained || fmt.Sprint(rep.Settled) != "[{batch cancelled 1}]" || rep.OrphanCount() != 0 {
					t.Fatalf("Shutdown: %v %v", rep, err)
				}
			}
			if ev := h.obs.waitTerminal(ref.ID); ev.Type != observe.EventCancelled {
				t.Fatalf("terminal %s", ev.Type)
			}
			if n := len(j.cancelCalls()); n != 1 {
				t.Fatalf("Cancel called %d times", n)
			}
		})
	}
}

// TestJobUserCodePanics: a panicking Submit fails the Work (panic); a
// panicking Cancel still lets it end cancelled.
func TestJobUserCodePanics(t *testing.T) {
	h := newHarness(t)
	o := work.NewOwner("o")
	bad := &work.Job{
		Submit: func(context.Context, string, string) ([]byte, error) { panic("submit " + canary) },
		Await:  func(context.Context, []byte) (work.Poll, error) { return work.Poll{}, nil },
	}
	ref := h.startJob(o, bad, "in")
	if ev := h.obs.waitTerminal(ref.ID); ev.Type != observe.EventFailed || ev.ErrorClass != work.ClassPanic {
		t.Fatalf("terminal %s %q", ev.Type, ev.ErrorClass)
	}
	j := newTestJob()
	spec := j.job()
	spec.Cancel = func(context.Context, []byte) error { panic("cancel " + canary) }
	ref = h.startJob(o, spec, "in")
	h.waitType(ref.ID, observe.EventWaiting, 1)
	if _, err := h.s.Cancel(context.Background(), o, ref.ID); err != nil {
		t.Fatal(err)
	}
	if ev := h.obs.waitTerminal(ref.ID); ev.Type != observe.EventCancelled {
		t.Fatalf("terminal %s", ev.Type)
	}
}

// TestJobForeground: Call of a job submits it, polls it with backoff on
// the engine's clock and returns its exact output.
func TestJobForeground(t *testing.T) {
	h := newHarness(t)
	j := newTestJob()
	o := work.NewOwner("o")
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := h.s.Call(context.Background(), work.Spec{Owner: o, Target: jobTarget, Job: j.job(), Input: "in"})
		done <- result{out, err}
	}()
	h.clk.BlockUntil(2) // the call's deadline timer and the first poll's
	h.clk.Advance(time.Second)
	(<-j.awaits).answer(jobReply{poll: work.Poll{State: work.PollWaiting}})
	h.clk.BlockUntil(2)
	h.clk.Advance(2 * time.Second)
	(<-j.awaits).answer(jobReply{poll: work.Poll{State: work.PollDone, Output: "fg " + canary}})
	if r := <-done; r.err != nil || r.out != "fg "+canary {
		t.Fatalf("Call: %q %v", r.out, r.err)
	}
}

// TestJobValidation: a job Spec with an agent target or an incomplete Job
// is ErrInvalidSpec, and nothing is registered.
func TestJobValidation(t *testing.T) {
	h := newHarness(t)
	o := work.NewOwner("o")
	ok := newTestJob().job()
	for _, spec := range []work.Spec{
		{Owner: o, Target: agent, Job: ok},
		{Owner: o, Target: jobTarget, Job: &work.Job{Await: ok.Await}},
		{Owner: o, Target: jobTarget, Job: &work.Job{Submit: ok.Submit, Await: ok.Await, MaxPolls: -1}},
		{Owner: o, Target: jobTarget, Job: &work.Job{Submit: ok.Submit, Await: ok.Await, Backoff: work.Backoff{Initial: time.Minute, Max: time.Second}}},
	} {
		if _, err := h.s.Start(context.Background(), spec); !errors.Is(err, work.ErrInvalidSpec) {
			t.Errorf("Start(%+v): %v, want ErrInvalidSpec", spec.Job, err)
		}
	}
	if n := censusTotal(h.s); n != 0 {
		t.Fatalf("%d Works registered", n)
	}
}

// TestWaitingJobsHoldNoGoroutine: 1,000 waiting jobs add no goroutine.
// Two blockers hold both running slots while the jobs queue behind them,
// and a third blocker queues last; when the second blocker ends, its
// goroutine submits every job in turn (each gives the slot back as it
// waits) and goes on to run the third blocker. With the jobs waiting, the
// goroutines are those counted before.
func TestWaitingJobsHoldNoGoroutine(t *testing.T) {
	const jobs = 1000
	h := newHarness(t, work.WithMaxRunning(2), work.WithMaxOutstanding(jobs+8), work.WithMaxStarts(0))
	j := newTestJob()
	spec := j.job()
	o := work.NewOwner("o")
	_, a := h.running(o, fn)
	_, b := h.running(o, fn)
	refs := make([]work.Ref, jobs)
	for i := range refs {
		refs[i] = h.startJob(o, spec, "in")
	}
	c := h.child()
	h.start(o, fn, c)
	before := runtime.NumGoroutine()
	b.complete("b")
	<-c.started
	for _, ref := range refs {
		h.waitType(ref.ID, observe.EventWaiting, 1)
	}
	after := runtime.NumGoroutine()
	snap, _ := h.s.Snapshot(context.Background())
	if snap.Waiting != jobs || snap.SlotsInUse != 2 {
		t.Fatalf("snapshot: %d waiting, %d slots in use; want %d and 2", snap.Waiting, snap.SlotsInUse, jobs)
	}
	if after != before {
		t.Fatalf("%d goroutines with %d jobs waiting, %d before: want no goroutine per waiting job", after, jobs, before)
	}
	a.complete("a")
	c.complete("c")
}

// TestJobInAChildsScope: a job a child starts in its own scope is
// cancelled (Job.Cancel once) when the child returns, as the scope's other
// Work is; a detached job goes on and completes.
func TestJobInAChildsScope(t *testing.T) {
	h := newHarness(t)
	j := newTestJob()
	o := work.NewOwner("o")
	parent, c := h.running(o, agent)
	ref, err := h.s.Start(context.Background(), work.Spec{Owner: c.ex.Scope(), Target: jobTarget, Job: j.job()})
	if err != nil {
		t.Fatal(err)
	}
	h.waitType(ref.ID, observe.EventWaiting, 1)
	detached := h.startJob(o, j.job(), "detached")
	h.waitType(detached.ID, observe.EventWaiting, 1)
	if _, err := h.s.Detach(context.Background(), o, detached.ID); err != nil {
		t.Fatal(err)
	}
	c.complete("parent done")
	h.obs.waitTerminal(parent.ID)
	if ev := h.obs.waitTerminal(ref.ID); ev.Type != observe.EventCancelled {
		t.Fatalf("the scope's job ended %s", ev.Type)
	}
	if cs := j.cancelCalls(); len(cs) != 1 || !bytes.Equal(cs[0], []byte("handle-"+ref.ID+" "+canary)) {
		t.Fatalf("Cancel calls %q", cs)
	}
	h.clk.Advance(time.Second)
	(<-j.awaits).answer(jobReply{poll: work.Poll{State: work.PollDone, Output: "x"}})
	if ev := h.obs.waitTerminal(detached.ID); ev.Type != observe.EventCompleted {
		t.Fatalf("the detached job ended %s", ev.Type)
	}
}
