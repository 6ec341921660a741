package enginetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// JobBackoff is the suite's job's backoff: short, so that its cases run
// on real time in well under a second.
var JobBackoff = work.Backoff{Initial: 20 * time.Millisecond, Max: 200 * time.Millisecond}

// JobClass is the class the suite's failing job reports (Poll.Class).
const JobClass = "quota_exceeded"

// jobControl steers one run of the suite's job, keyed by the Work's input.
type jobControl struct {
	script []work.Poll   // the answers of the first polls; then waiting
	gated  bool          // each poll waits for a token on gate
	hold   bool          // a gated poll waits for its token even when its context ends
	gate   chan struct{} // one token lets one poll answer
	// submitted gets a token as Submit starts (buffered; a full one
	// drops); when submitGate is set Submit then waits for a token on
	// it, whatever its context does.
	submitted  chan struct{}
	submitGate chan struct{}
	polled     chan int // the number of each poll, as it starts (buffered; a full one drops)
	mu         sync.Mutex
	keys       []string // Submit's keys
	handle     []byte   // what Submit returned
	polls      int
	cancel     [][]byte // Cancel's handles
}

var jobControls sync.Map // input -> *jobControl

// newJob registers a job control for a new input (with suffix appended)
// and returns the input.
func newJob(t *testing.T, suffix string, gated bool, script ...work.Poll) (string, *jobControl) {
	input := fmt.Sprintf("job-%d%s", tokenSeq.Add(1), suffix)
	c := &jobControl{script: script, gated: gated, gate: make(chan struct{}), polled: make(chan int, 64),
		submitted: make(chan struct{}, 1)}
	jobControls.Store(input, c)
	t.Cleanup(func() { jobControls.Delete(input) })
	return input, c
}

func jobOf(handle []byte) (*jobControl, error) {
	input, _, _ := strings.Cut(string(handle), "|")
	v, ok := jobControls.Load(input)
	if !ok {
		return nil, errors.New("enginetest: unknown job")
	}
	return v.(*jobControl), nil
}

// suiteJob is the suite's external job. Its handle is the input, "|"
// and the canary: content that must never reach an Observer.
func suiteJob() *work.Job {
	return &work.Job{
		Backoff: JobBackoff,
		Submit: func(_ context.Context, key, input string) ([]byte, error) {
			v, ok := jobControls.Load(input)
			if !ok {
				return nil, errors.New("enginetest: unknown job")
			}
			c := v.(*jobControl)
			select {
			case c.submitted <- struct{}{}:
			default:
			}
			if c.submitGate != nil {
				<-c.submitGate
			}
			h := []byte(input + "|handle " + canary)
			c.mu.Lock()
			c.keys = append(c.keys, key)
			c.handle = h
			c.mu.Unlock()
			return h, nil
		},
		Await: func(ctx context.Context, h []byte) (work.Poll, error) {
			c, err := jobOf(h)
			if err != nil {
				return work.Poll{}, err
			}
			c.mu.Lock()
			c.polls++
			n := c.polls
			c.mu.Unlock()
			select {
			case c.polled <- n:
			default:
			}
			switch {
			case c.hold:
				<-c.gate
			case c.gated:
				select {
				case <-c.gate:
				case <-ctx.Done():
					return work.Poll{}, ctx.Err()
				}
			}
			if n <= len(c.script) {
				return c.script[n-1], nil
			}
			return work.Poll{State: work.PollWaiting}, nil
		},
		Cancel: func(_ context.Context, h []byte) error {
			c, err := jobOf(h)
			if err != nil {
				return err
			}
			c.mu.Lock()
			c.cancel = append(c.cancel, bytes.Clone(h))
			c.mu.Unlock()
			return nil
		},
	}
}

func (c *jobControl) state() (keys []string, handle []byte, polls int, cancels [][]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.keys...), c.handle, c.polls, append([][]byte(nil), c.cancel...)
}

// waitPoll waits until poll n of c has started.
func (v *env) waitPoll(c *jobControl, n int) {
	v.t.Helper()
	timeout := time.After(patience)
	for {
		select {
		case got := <-c.polled:
			if got >= n {
				return
			}
		case <-timeout:
			v.t.Fatalf("poll %d did not start within %s", n, patience)
		}
	}
}

// jobEvents returns the Work's events of the job's kinds and its
// transitions, as "type" or "polled:outcome".
func jobEvents(evs []observe.Event) []string {
	var out []string
	for _, e := range evs {
		switch {
		case e.Type == observe.EventPolled:
			out = append(out, "polled:"+e.Poll)
		case e.Type == observe.EventWaiting || isTransition(e):
			out = append(out, string(e.Type))
		}
	}
	return out
}

// checkNoContent fails when any recorded event or call carries the canary.
func (v *env) checkNoContent() {
	v.t.Helper()
	if dump := fmt.Sprintf("%#v", v.rec.Events()); strings.Contains(dump, canary) {
		v.t.Errorf("an Observer event carries content: %s", canaryContext(dump))
	}
	if dump := fmt.Sprintf("%#v", v.rec.Calls()); strings.Contains(dump, canary) {
		v.t.Errorf("an Observer call carries content: %s", canaryContext(dump))
	}
}

// jobCompletes: a job that answers waiting twice, then done, completes
// with its exact output; Submit ran once with the Work's id as its key;
// while it waits its Status is running with Waiting set; its events are
// queued, running, waiting, one polled per poll (waiting, waiting, done),
// completed, in that order; the canary in its input, handle and output
// reaches no Observer event.
func (s *suite) jobCompletes(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "job-completes")
	out := "the job's output " + canary
	input, c := newJob(t, " "+canary, true, work.Poll{State: work.PollWaiting},
		work.Poll{State: work.PollWaiting, Progress: true}, work.Poll{State: work.PollDone, Output: out})
	ref := v.start(o, Job, input)
	for n := 1; n <= 3; n++ {
		v.waitPoll(c, n)
		if st := v.status(o, ref.ID); st.State != work.StateRunning || !st.Waiting {
			t.Errorf("during poll %d: state %s, Waiting %v; want running, waiting", n, st.State, st.Waiting)
		}
		c.gate <- struct{}{}
	}
	st, got := v.settle(o, ref.ID)
	if st.State != work.StateCompleted || got != out {
		t.Fatalf("settled %s with %q, want completed with %q", st.State, got, out)
	}
	if st.Waiting {
		t.Errorf("a completed job's Status still says Waiting")
	}
	keys, handle, polls, cancels := c.state()
	if len(keys) != 1 || keys[0] != ref.ID {
		t.Errorf("Submit keys %q, want exactly [%q] (the Work's id)", keys, ref.ID)
	}
	if !strings.Contains(string(handle), canary) || polls != 3 || len(cancels) != 0 {
		t.Errorf("handle %q, %d polls, %d cancels; want the canary handle, 3 polls, no cancel", handle, polls, len(cancels))
	}
	want := []string{"queued", "running", "waiting", "polled:waiting", "polled:waiting", "polled:done", "completed"}
	v.eventually("the completed event", func() bool { return hasTerminal(byWork(v.rec.Events())[ref.ID]) })
	if got := jobEvents(byWork(v.rec.Events())[ref.ID]); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events %v, want %v", got, want)
	}
	v.checkNoContent()
}

// jobFails: a poll that answers failed ends the Work failed with the
// poll's class, reported after the polled event.
func (s *suite) jobFails(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "job-fails")
	input, _ := newJob(t, "", false, work.Poll{State: work.PollWaiting},
		work.Poll{State: work.PollFailed, Class: JobClass})
	ref := v.start(o, Job, input)
	st, _ := v.settle(o, ref.ID)
	if st.State != work.StateFailed || st.Class != JobClass {
		t.Fatalf("settled %s (class %q), want failed (class %q)", st.State, st.Class, JobClass)
	}
	v.eventually("the failed event", func() bool { return hasTerminal(byWork(v.rec.Events())[ref.ID]) })
	want := []string{"queued", "running", "waiting", "polled:waiting", "polled:failed", "failed"}
	evs := byWork(v.rec.Events())[ref.ID]
	if got := jobEvents(evs); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events %v, want %v", got, want)
	}
	for _, e := range evs {
		if e.Type == observe.EventFailed && e.ErrorClass != JobClass {
			t.Errorf("failed event's ErrorClass %q, want %q", e.ErrorClass, JobClass)
		}
	}
}

// jobCancelWhileWaiting: cancelling a job that waits is accepted, the
// Work ends cancelled, and the job's Cancel is called exactly once, with
// the handle Submit returned.
func (s *suite) jobCancelWhileWaiting(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "job-cancel")
	input, c := newJob(t, "", false)
	ref := v.start(o, Job, input)
	v.waitPoll(c, 2) // it waits, between or in polls
	r, err := v.e.Cancel(v.ctx, o, ref.ID)
	if err != nil || !r.Accepted {
		t.Fatalf("Cancel: %+v, %v; want accepted", r, err)
	}
	st, _ := v.settle(o, ref.ID)
	if st.State != work.StateCancelled || st.Class != work.ClassCancelled {
		t.Fatalf("settled %s (class %q), want cancelled", st.State, st.Class)
	}
	_, handle, _, cancels := c.state()
	if len(cancels) != 1 || !bytes.Equal(cancels[0], handle) {
		t.Fatalf("Cancel called with %q, want exactly once with %q", cancels, handle)
	}
	v.checkNoContent()
}

// jobLaunchIdempotency: a launch retried with the same tool-call
// identity gets the same Work, and the job is submitted once.
func (s *suite) jobLaunchIdempotency(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "job-launch")
	input, c := newJob(t, "", false, work.Poll{State: work.PollDone, Output: "done once"})
	spec := v.spec(o, Job, input)
	spec.CallID, spec.InputDigest = "call-job-1", [32]byte{1}
	first, err := v.e.Start(v.ctx, spec)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	again, err := v.e.Start(v.ctx, spec)
	if err != nil || again.ID != first.ID {
		t.Fatalf("retried Start: %v, %v; want the same Work %s", again.ID, err, first.ID)
	}
	if st, out := v.settle(o, first.ID); st.State != work.StateCompleted || out != "done once" {
		t.Fatalf("settled %s with %q", st.State, out)
	}
	if third, err := v.e.Start(v.ctx, spec); err != nil || third.ID != first.ID {
		t.Fatalf("Start after completion: %v, %v; want the same Work %s", third.ID, err, first.ID)
	}
	if keys, _, _, _ := c.state(); len(keys) != 1 || keys[0] != first.ID {
		t.Fatalf("Submit keys %q, want exactly [%q]", keys, first.ID)
	}
}

// jobDeadline: a job that waits past its maximum duration ends failed
// with class deadline_exceeded, and its Cancel is called once. (The
// duration leaves a durable engine time for its first poll: past the
// deadline none starts.)
func (s *suite) jobDeadline(t *testing.T) {
	v := s.env(t, func(c *Config) { c.MaxDuration = 2 * time.Second })
	o := owner(t, "job-deadline")
	input, c := newJob(t, "", false)
	ref := v.start(o, Job, input)
	st, _ := v.settle(o, ref.ID)
	if st.State != work.StateFailed || st.Class != work.ClassDeadline {
		t.Fatalf("settled %s (class %q), want failed (class %q)", st.State, st.Class, work.ClassDeadline)
	}
	_, handle, polls, cancels := c.state()
	if polls == 0 || len(cancels) != 1 || !bytes.Equal(cancels[0], handle) {
		t.Fatalf("%d polls, Cancel called with %q; want polls and exactly one Cancel with %q", polls, cancels, handle)
	}
}

// jobDeadlineDecides: once a job's Work is past its deadline no poll
// starts and a poll's answer that arrives after it decides nothing; the
// Work fails deadline_exceeded. A poll that started in time and answers
// done after the deadline does not complete the Work (the job, finished
// at its service, is not cancelled there); a Submit that returns its
// handle after the deadline is followed by no poll, and the job is
// cancelled at its service, once. Each Work's deadline counts from when
// it started running, which is before its poll (or Submit) starts, so
// waiting the maximum duration from there passes it on every engine
// that reads the same clock as the test.
func (s *suite) jobDeadlineDecides(t *testing.T) {
	const maxDur = 3 * time.Second
	v := s.env(t, func(c *Config) { c.MaxDuration = maxDur })
	o := owner(t, "job-deadline-decides")
	lateIn, late := newJob(t, "", true, work.Poll{State: work.PollDone, Output: "late output"})
	late.hold = true
	slowIn, slow := newJob(t, "", false, work.Poll{State: work.PollDone, Output: "never polled"})
	slow.submitGate = make(chan struct{})
	var release sync.Once // a case that stops early still lets the held calls return
	t.Cleanup(func() { release.Do(func() { close(late.gate); close(slow.submitGate) }) })
	lateRef := v.start(o, Job, lateIn)
	slowRef := v.start(o, Job, slowIn)
	select {
	case <-slow.submitted:
	case <-time.After(patience):
		t.Fatalf("Submit did not start within %s", patience)
	}
	v.waitPoll(late, 1)
	// Both Works started running before now: once maxDur has passed from
	// here both are past their deadlines. Then the held poll answers done
	// and the held Submit returns its handle.
	tm := time.NewTimer(maxDur)
	<-tm.C
	select {
	case late.gate <- struct{}{}:
	case <-time.After(patience):
		t.Fatalf("the held poll did not take its token within %s", patience)
	}
	release.Do(func() { close(late.gate); close(slow.submitGate) })

	st, out := v.settle(o, lateRef.ID)
	if st.State != work.StateFailed || st.Class != work.ClassDeadline || out != "" {
		t.Errorf("a poll that answered done after the deadline: settled %s (class %q) with %q; want failed (class %q), no output",
			st.State, st.Class, out, work.ClassDeadline)
	}
	_, _, polls, cancels := late.state()
	if polls != 1 || len(cancels) != 0 {
		t.Errorf("a poll that answered done after the deadline: %d polls, %d cancels; want 1 poll, no cancel", polls, len(cancels))
	}
	st, out = v.settle(o, slowRef.ID)
	if st.State != work.StateFailed || st.Class != work.ClassDeadline || out != "" {
		t.Errorf("a job submitted past the deadline: settled %s (class %q) with %q; want failed (class %q), no output",
			st.State, st.Class, out, work.ClassDeadline)
	}
	_, handle, polls, cancels := slow.state()
	if polls != 0 || len(cancels) != 1 || !bytes.Equal(cancels[0], handle) {
		t.Errorf("a job submitted past the deadline: %d polls, Cancel called with %q; want no poll and one Cancel with %q",
			polls, cancels, handle)
	}
	v.checkNoContent()
}
