package restate

import (
	"context"
	"time"

	restate "github.com/restatedev/sdk-go"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// stopPromise is the durable promise of a job's workflow that its control
// object resolves (through the Stop handler) when the Work is
// cancel-requested while it waits.
const stopPromise = "stop"

// submitAttempts bounds the submits of a job whose worker died.
const submitAttempts = 3

// pollTimeout bounds one poll.
const pollTimeout = time.Minute

// submitResult is the submit step's result: the handle, or why there is
// none.
type submitResult struct {
	Handle  []byte `json:",omitempty"`
	Out     runOutcome
	Started time.Time
}

// pollResult is one poll step's result.
type pollResult struct {
	Outcome  string // work.PollOutcome*
	Output   string `json:",omitempty"`
	Class    string `json:",omitempty"`
	Progress bool   `json:",omitempty"`
}

// waitingReply tells the workflow whether the Work is cancel-requested.
type waitingReply struct{ Stop bool }

// runJob runs an external job's Work: the submit as a journaled step on
// one of the target's slots (the step claims its attempt first, as a
// child's run does), then, holding nothing, durable timers between polls
// (work.Backoff), each poll a journaled step of its own. A cancel
// resolves the stop promise and ends the wait at once; past the maximum
// duration no poll starts, an answer that arrives past it decides
// nothing (driver.PastDeadline), the job is cancelled and the Work fails,
// deadline_exceeded.
// The handle lives in the workflow's journal only.
func (w *Worker) runJob(ctx restate.WorkflowContext, in workInput) error {
	t := w.targets[in.Label]
	ctl := func(handler string, arg any) (waitingReply, error) {
		return restate.Object[waitingReply](ctx, w.cfg.ns+"."+controlService, in.ID, handler).Request(arg)
	}
	finish := func(out runOutcome) error {
		_, err := restate.Object[restate.Void](ctx, w.cfg.ns+"."+controlService, in.ID, hFinish).Request(out)
		return err
	}
	sub, rerr := restate.Run(ctx, func(rc restate.RunContext) (submitResult, error) {
		return w.submit(rc, t.Job, in)
	}, restate.WithName("submit"))
	if rerr != nil {
		return rerr
	}
	switch {
	case sub.Out.NotRun:
		return nil
	case sub.Out.Class != "":
		return finish(sub.Out)
	}
	cancelJob := func(class string) error {
		if t.Job.Cancel != nil {
			if _, err := restate.Run(ctx, func(rc restate.RunContext) (bool, error) {
				h, err := w.cfg.ring.openBytes(in.ID, fieldHandle, sub.Handle)
				if err != nil {
					w.contentError(in.ID, err) // no handle to cancel; the Work ends anyway
					return false, nil
				}
				cctx, cancel := context.WithTimeout(rc, pollTimeout)
				defer cancel()
				driver.CancelJob(cctx, t.Job, h) // its error or panic is the service's; the Work ends anyway
				return true, nil
			}, restate.WithName("cancel")); err != nil {
				return err
			}
		}
		return finish(runOutcome{Class: class, Usage: &observe.Usage{}})
	}
	st, cerr := ctl(hWaiting, restate.Void{})
	if cerr != nil {
		return cerr
	}
	if st.Stop {
		return cancelJob(work.ClassCancelled)
	}
	var deadline time.Time
	if in.MaxDuration > 0 {
		deadline = sub.Started.Add(in.MaxDuration)
	}
	stop := restate.Promise[bool](ctx, stopPromise)
	var jw driver.JobWait
	// The clock is read in journaled steps: a replay waits the same.
	clock := func() time.Time {
		t, _ := restate.Run(ctx, func(restate.RunContext) (time.Time, error) { return time.Now(), nil }, restate.WithName("clock"))
		return t
	}
	at := clock()
	for {
		// Past the deadline no poll starts (a Submit that returned late
		// included): the job is cancelled and the Work fails.
		if driver.PastDeadline(at, deadline) {
			return cancelJob(work.ClassDeadline)
		}
		d := jw.Next(in.Job.Backoff)
		last := false // the timer ends at the deadline: no poll follows it
		if !deadline.IsZero() && deadline.Sub(at) <= d {
			d, last = deadline.Sub(at), true
		}
		timer := restate.After(ctx, d)
		first, err := restate.WaitFirst(ctx, timer, stop)
		if err != nil {
			return err
		}
		if first == stop {
			return cancelJob(work.ClassCancelled)
		}
		if last {
			return cancelJob(work.ClassDeadline)
		}
		p, err := restate.Run(ctx, func(rc restate.RunContext) (pollResult, error) {
			return w.poll(rc, t.Job, in, sub.Handle), nil
		}, restate.WithName("poll"))
		if err != nil {
			return err
		}
		st, cerr := ctl(hPolled, p.Outcome)
		if cerr != nil {
			return cerr
		}
		at = clock()
		// An answer that arrives past the deadline decides nothing;
		// completion wins over a cancel request, as a child's does.
		// Sizes of the plaintext: a sealed output's follows from its length.
		end, ok := jw.Polled(driver.JobPoll{Outcome: p.Outcome, Class: p.Class, Progress: p.Progress, Bytes: plainLen(p.Output)},
			in.MaxResultBytes, in.Job.MaxPollErrors, driver.PastDeadline(at, deadline), st.Stop)
		switch {
		case !ok:
			continue
		case end.Cancel:
			return cancelJob(end.Class)
		case end.Class == "":
			return finish(runOutcome{Output: p.Output, Bytes: end.Bytes, Usage: &observe.Usage{}})
		}
		return finish(runOutcome{Class: end.Class, Bytes: end.Bytes, Usage: &observe.Usage{}})
	}
}

// submit claims the attempt and submits the job with the Work's id as its
// key, on one of the target's slots.
func (w *Worker) submit(rc context.Context, job *work.Job, in workInput) (submitResult, error) {
	claim, release, err := w.claim(rc, in)
	if err != nil {
		return submitResult{}, err
	}
	defer release()
	switch {
	case claim.Lost:
		return submitResult{Out: runOutcome{Class: work.ClassWorkerLost}}, nil
	case !claim.Run:
		return submitResult{Out: runOutcome{NotRun: true}}, nil
	}
	defer w.running.Add(&driver.Attempt{ID: in.ID, Owner: in.Owner, Label: in.Label, Kind: in.Kind, Depth: in.Depth,
		N: claim.Attempt, Created: in.Created, Started: claim.Started})()
	input, err := w.cfg.ring.openString(in.ID, fieldInput, in.Input)
	if err != nil {
		w.contentError(in.ID, err)
		return submitResult{Out: runOutcome{Class: classContentKey, Usage: &observe.Usage{}}}, nil
	}
	h, class := driver.Submit(context.Background(), rc, job, in.ID, input, in.MaxDuration)
	if class != "" {
		return submitResult{Out: runOutcome{Class: class, Usage: &observe.Usage{}}}, nil
	}
	// Sealed in the step: the journal keeps the handle sealed only.
	if h, err = w.cfg.ring.sealBytes(in.ID, fieldHandle, h); err != nil {
		w.contentError(in.ID, err)
		return submitResult{Out: runOutcome{Class: classContentKey, Usage: &observe.Usage{}}}, nil
	}
	return submitResult{Handle: h, Started: claim.Started}, nil
}

// poll runs one Await on one of the target's poll slots, with the
// handle opened and a done job's output sealed (WithContentKeys).
func (w *Worker) poll(rc context.Context, job *work.Job, in workInput, handle []byte) pollResult {
	handle, err := w.cfg.ring.openBytes(in.ID, fieldHandle, handle)
	if err != nil {
		w.contentError(in.ID, err)
		return pollResult{Outcome: observe.PollOutcomeFailed, Class: classContentKey}
	}
	bound := w.polls[in.Label]
	select {
	case bound <- struct{}{}:
	case <-rc.Done():
		return pollResult{Outcome: observe.PollOutcomeError}
	}
	defer func() { <-bound }()
	pctx, cancel := context.WithTimeout(context.WithoutCancel(rc), pollTimeout)
	defer cancel()
	o, p := driver.Await(pctx, job, handle)
	if o == observe.PollOutcomeDone {
		out, err := w.cfg.ring.sealString(in.ID, fieldOutput, p.Output)
		if err != nil {
			w.contentError(in.ID, err)
			return pollResult{Outcome: observe.PollOutcomeFailed, Class: classContentKey}
		}
		p.Output = out
	}
	return pollResult{Outcome: o, Output: p.Output, Class: p.Class, Progress: p.Progress}
}

// waiting marks a job's Work as waiting (EventWaiting) after its submit.
func (c control) waiting(ctx restate.ObjectContext, _ restate.Void) (waitingReply, error) {
	s, ok := load(ctx)
	if !ok || s.State.Terminal() {
		return waitingReply{Stop: true}, nil
	}
	s.Waiting = true
	c.record(ctx, s)
	c.rep.emit(s.In, observe.Event{Type: observe.EventWaiting, Time: now(ctx)})
	return waitingReply{Stop: s.State == work.StateCancelRequested}, nil
}

// polled reports one poll's outcome (EventPolled).
func (c control) polled(ctx restate.ObjectContext, outcome string) (waitingReply, error) {
	s, ok := load(ctx)
	if !ok || s.State.Terminal() {
		return waitingReply{Stop: true}, nil
	}
	c.rep.emit(s.In, observe.Event{Type: observe.EventPolled, Poll: outcome, Time: now(ctx)})
	return waitingReply{Stop: s.State == work.StateCancelRequested}, nil
}
