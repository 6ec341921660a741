package work

import (
	"context"
	"errors"
	"time"

	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/observe"
)

// External jobs in process (Spec.Job). A job's Work leaves its owner's
// queue into a running slot like any Work; its Submit runs on the child
// goroutine there. Once Submit has returned a handle the Work gives its
// slot back (observe.EventWaiting): it stays running, Status.Waiting is set, and
// between polls nothing but an entry in the poll timers' heap (jobtimer.go:
// one Clock timer for all waiting jobs) refers to it (no goroutine, no
// slot). A due poll takes its target's poll bound (Job.MaxPolls), or waits
// for it in the bound's FIFO list, and runs Await on a goroutine of its
// own (jobpoll.go). At any time at most one goroutine acts for a job's
// Work: the one running its Submit, a poll or its Cancel; jobWait.phase,
// under s.mu, says which.
//
// A waiting Work holds one count of s.live (as a child goroutine does)
// from the moment it gives its slot back until the goroutine that settles
// it has delivered its events, so that Close waits for it.

// jobPhase is where an external job's Work is (guarded by s.mu).
type jobPhase uint8

const (
	jobSubmitting jobPhase = iota // Submit runs on the Work's running slot
	jobTimer                      // between polls: in the poll timers' heap
	jobDue                        // due, in its target's poll FIFO
	jobPolling                    // a poll runs on a goroutine of its own
	jobStopping                   // cancelled or past its deadline: Cancel runs, then it settles
)

// jobStop is why a job's Work was told to stop: its context (Submit's, a
// poll's) is cancelled with that cause, and between polls, when it has
// none, the reason is all there is to read.
type jobStop uint8

const (
	jobRuns     jobStop = iota
	jobCancel           // cancel requested (Cancel, Release, Close, its scope's end)
	jobDeadline         // its maximum duration passed
)

// noCancel is a waiting job's item.cancel between polls: it has no
// context then (wakeJobLocked records why it stops).
func noCancel(error) {}

// jobWait is an external job's state in its item, from Start until it
// settles (then item.job is nil). Only the handle survives Submit: no
// closure of the caller's is kept.
type jobWait struct {
	job     *Job
	input   string // the child's input, until Submit has it
	handle  []byte // what Submit returned
	phase   jobPhase
	waiting bool    // it gave its slot back (EventWaiting)
	stopped jobStop // why its context ended, if it did
	errs    int32   // consecutive poll errors
	tIdx    int32   // 1 + its index in the poll timers' heap; 0 when not in it
	delay   time.Duration
	due     time.Time // when its next poll is due, while in the heap
}

func newJobWait(spec *Spec) *jobWait {
	return &jobWait{job: spec.Job, input: spec.Input}
}

// submitJob runs the Submit of it, a job's Work that has just taken a
// running slot, with cctx (the context prepareRunLocked made for it, which
// it.cancel cancels) on the child goroutine it was prepared for, and
// returns the Work that goroutine runs next, as settle does.
func (s *Engine) submitJob(it *item, cctx context.Context) (*item, context.Context) {
	jw := it.job
	returned := false
	defer func() {
		if !returned { // Submit called runtime.Goexit
			s.failJob(it, jw, classPanic)
		}
	}()
	s.labelChild()
	handle, err, panicked := callSubmit(cctx, jw.job, it.id(), jw.input)
	returned = true

	e := s.getEmission()
	defer putEmission(e)
	s.mu.Lock()
	jw.input = ""
	now := s.nowLocked(e)
	cause := context.Cause(cctx)
	switch {
	case panicked:
		s.finishJobLocked(it, jw, StateFailed, classPanic, "", now, e)
	case err != nil:
		to, class := StateFailed, classError
		switch {
		case errors.Is(cause, errDeadline):
			class = classDeadline
		case it.state() == StateCancelRequested && cctx.Err() != nil && errors.Is(err, context.Canceled):
			to, class = StateCancelled, classCancelled
		}
		s.finishJobLocked(it, jw, to, class, "", now, e)
	case cctx.Err() != nil:
		// Cancelled (or past its deadline) while it was submitted: the
		// job exists at the service, so it is cancelled there first.
		jw.handle, jw.phase = handle, jobStopping
		s.unlockAndEmit(e)
		s.stopJob(it, jw)
		return nil, nil
	default:
		jw.handle, jw.waiting = handle, true
		// Between polls the Work has no context: Submit's ends here, and
		// each poll gets one of its own (startPollLocked).
		it.cancel(nil)
		it.cancel = noCancel
		e.push(it, observe.EventWaiting, now)
		s.live.Add(1) // the waiting Work's, released by the goroutine that settles it
		s.freeSlotLocked(it, e)
		s.armPollLocked(it, jw, pollDelay(jw.job.Backoff, 0, false))
		nit, njctx := s.nextLocked(e)
		s.dispatchLocked(e)
		s.unlockAndEmit(e)
		return nit, njctx
	}
	nit, njctx := s.nextLocked(e)
	s.dispatchLocked(e)
	s.unlockAndEmit(e)
	return nit, njctx
}

// nextLocked takes the first Work of the fair order onto the pool slot a
// settlement just freed, for the calling child goroutine to run next (as
// settle does), when no reclaimer waits for one.
func (s *Engine) nextLocked(e *emission) (*item, context.Context) {
	if s.closed || s.used >= s.lim.MaxRunning || len(s.reclaimers) > 0 || s.ready.len() == 0 {
		return nil, nil
	}
	nit := s.popLocked(s.ready.front())
	s.used++
	return nit, s.prepareRunLocked(nit, nil, e)
}

// wakeJobLocked is called as it's context is cancelled with cause (Cancel,
// Release, Close, the end of its owner's scope: errCancelRequested or
// errClosed; its deadline: errDeadline): it records why, and a job waiting
// between polls or for its poll bound stops at once (it leaves the poll
// timers' heap, or its FIFO entry is skipped) and a goroutine of its own calls its Cancel and
// settles it. A Submit or a poll in progress sees its context end instead.
func (s *Engine) wakeJobLocked(it *item, cause error) {
	jw := it.job
	if jw == nil {
		return
	}
	if jw.stopped == jobRuns {
		jw.stopped = jobCancel
		if errors.Is(cause, errDeadline) {
			jw.stopped = jobDeadline
		}
	}
	switch jw.phase {
	case jobTimer:
		s.removeTimerLocked(jw)
	case jobDue:
		// Its entry in the poll FIFO is skipped (the phase no longer says due).
	default:
		return
	}
	jw.phase = jobStopping
	go s.stopJob(it, jw)
}

// expireJob is a job's deadline on a Clock other than the system's.
func (s *Engine) expireJob(it *item) {
	s.mu.Lock()
	if it.job != nil {
		it.cancelRun(errDeadline)
		s.wakeJobLocked(it, errDeadline)
	}
	s.mu.Unlock()
}

// stopJob ends a job whose context ended (phase jobStopping): it calls
// Job.Cancel once with the handle, if both are set, then settles the Work:
// failed with ClassDeadline past its deadline, else cancelled.
func (s *Engine) stopJob(it *item, jw *jobWait) {
	if jw.job.Cancel != nil && jw.handle != nil {
		callCancel(it.ctx, jw.job.Cancel, jw.handle)
	}
	e := s.getEmission()
	defer putEmission(e)
	s.mu.Lock()
	to, class := StateCancelled, classCancelled
	if jw.stopped == jobDeadline {
		to, class = StateFailed, classDeadline
	}
	s.endJobLocked(it, jw, to, class, "", e)
}

// failJob settles a job whose user code called runtime.Goexit.
func (s *Engine) failJob(it *item, jw *jobWait, class termClass) {
	e := s.getEmission()
	defer putEmission(e)
	s.mu.Lock()
	s.endJobLocked(it, jw, StateFailed, class, "", e)
}

// endJobLocked settles it as finishJobLocked does, dispatches, releases
// s.mu, delivers e and, for a Work that waited, its count of s.live.
func (s *Engine) endJobLocked(it *item, jw *jobWait, to observe.State, class termClass, out string, e *emission) {
	waited := jw.waiting
	s.finishJobLocked(it, jw, to, class, out, s.nowLocked(e), e)
	s.dispatchLocked(e)
	s.unlockAndEmit(e)
	if waited {
		s.exited()
	}
}

// finishJobLocked records how a job's Work ended, as settle does for a
// child, and frees its running slot unless it gave it back when it began
// to wait. A completed job's output over the result-byte limit fails it
// (result_too_large). The caller dispatches.
func (s *Engine) finishJobLocked(it *item, jw *jobWait, to observe.State, class termClass, out string, now time.Time, e *emission) {
	bytes := 0
	if to == StateCompleted {
		bytes = len(out)
		if it.maxBytes > 0 && len(out) > it.maxBytes {
			to, class = StateFailed, classResultTooLarge
		} else {
			it.output, it.hasOutput = out, true
		}
	}
	s.removeTimerLocked(jw)
	jw.handle, jw.phase = nil, jobStopping
	it.job = nil
	s.running.remove(it)
	if it.stopTimer != nil {
		it.stopTimer()
		it.stopTimer = nil
	}
	s.removeDeadlineLocked(it)
	it.cancel(nil)
	it.cancel = nil
	s.endRunLocked(it, class.String(), e)
	it.class = class
	if ev := s.transition(it, to, e, now); ev != nil {
		ev.Duration, ev.Bytes = now.Sub(it.started), bytes
	}
	if s.retireLocked(it, now, e) {
		s.evictLocked(it.owner)
	}
	s.endScopeLocked(it.sc, it.scopeID, e)
	if !jw.waiting {
		s.freeSlotLocked(it, e)
	}
}

// callSubmit calls j.Submit, recovering a panic.
func callSubmit(ctx context.Context, j *Job, key, input string) (h []byte, err error, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			h, err, panicked = nil, nil, true
		}
	}()
	h, err = j.Submit(ctx, key, input)
	return h, err, false
}

// callCancel calls a job's Cancel, recovering a panic: the Work is
// cancelled whatever Cancel does.
func callCancel(ctx context.Context, cancel func(context.Context, []byte) error, h []byte) {
	defer func() { _ = recover() }()
	_ = cancel(ctx, h)
}

// errJobFailed is what a foreground job's run returns for a poll that
// answered PollFailed (Call's class is then ClassError).
var errJobFailed = errors.New("work: the job failed")

// foregroundJob returns the run of a job called in the foreground (Call):
// Submit (its key is the call's own scope id), then polls with backoff on
// the call's child goroutine, which a foreground call holds anyway, and
// Cancel once, with the handle, when the call's context ends first.
func (s *Engine) foregroundJob(j *Job, input string) RunFunc {
	return func(ctx context.Context) (string, error) {
		ex, _ := ExecutionFrom(ctx)
		h, err := j.Submit(ctx, ex.Scope().id, input)
		if err != nil {
			return "", err
		}
		var d time.Duration
		var errs int32
		progress := false
		for {
			if errs == 0 {
				d = pollDelay(j.Backoff, d, progress)
			} else {
				d = pollDelay(j.Backoff, d, false)
			}
			wake := make(chan struct{})
			stop := s.clock.AfterFunc(d, func() { close(wake) })
			select {
			case <-wake:
			case <-ctx.Done():
				stop()
			}
			if ctx.Err() != nil {
				if j.Cancel != nil {
					callCancel(context.WithoutCancel(ctx), j.Cancel, h)
				}
				return "", ctx.Err()
			}
			p, err := j.Await(ctx, h)
			switch {
			case err != nil:
				if errs++; errs >= j.maxPollErrors() {
					return "", err
				}
				continue
			case p.State == PollDone:
				return p.Output, nil
			case p.State == PollFailed:
				return "", errJobFailed
			}
			errs, progress = 0, p.Progress
		}
	}
}

// pollDelay is the delay before a job's next poll under b
// (contract.PollDelay).
func pollDelay(b Backoff, d time.Duration, progress bool) time.Duration {
	return contract.PollDelay(b.Initial, b.Max, d, progress)
}
