package work

import (
	"context"
	"sync"
	"time"

	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/observe"
)

// pollBound is a target label's poll bound: the polls of its jobs that
// run (n) and the Works whose poll is due and waits for the bound, oldest
// first (due[head:], entries no longer due are skipped).
type pollBound struct {
	n    int
	due  []*item
	head int
}

// jobs is the in-process engine's state of external jobs (guarded by s.mu).
type jobs struct {
	bounds map[string]*pollBound // target label -> its poll bound
	timer  jobTimers             // the waiting jobs' poll timer (jobtimer.go)
}

// maxPolls is the bound j puts on its target's polls at once.
func (j *Job) maxPolls() int { return j.resolved().MaxPolls }

// maxPollErrors is how many consecutive poll errors fail j's Work.
func (j *Job) maxPollErrors() int32 { return int32(j.resolved().MaxPollErrors) }

// armPollLocked schedules its next poll d from now, on the engine's
// Clock: between polls an entry in the poll timers' heap is all that
// refers to the Work (jobtimer.go).
func (s *Engine) armPollLocked(it *item, jw *jobWait, d time.Duration) {
	jw.delay, jw.phase = d, jobTimer
	jw.due = s.clock.Now().Add(d)
	s.addTimerLocked(it, jw)
}

// pollDueLocked is called as it's poll falls due (it has left the timers'
// heap): the poll starts on a goroutine of its own when its target's poll
// bound has room, else it joins the bound's FIFO list (no goroutine waits
// for the bound). A Work whose context has ended, or whose deadline has
// passed, is stopped instead.
func (s *Engine) pollDueLocked(it *item) {
	jw := it.job
	if s.stoppedLocked(it, jw) {
		return
	}
	if s.jobs.bounds == nil {
		s.jobs.bounds = make(map[string]*pollBound)
	}
	b := s.jobs.bounds[it.target.Label]
	if b == nil {
		b = new(pollBound)
		s.jobs.bounds[it.target.Label] = b
	}
	if b.n < jw.job.maxPolls() {
		s.startPollLocked(b, it, jw)
		return
	}
	jw.phase = jobDue
	b.due = append(b.due, it)
}

// stoppedLocked stops it's job, as a poll of it is about to start, when
// its context has ended or its deadline has passed (no poll starts past
// the deadline, though the deadline's own timer may not have run yet: the
// Work fails deadline_exceeded as it would then), and reports whether it
// did.
func (s *Engine) stoppedLocked(it *item, jw *jobWait) bool {
	if jw.stopped == jobRuns {
		if d := it.maxDur(); d <= 0 || s.clock.Now().Before(it.started.Add(d)) {
			return false
		}
		jw.stopped = jobDeadline
	}
	jw.phase = jobStopping
	go s.stopJob(it, jw)
	return true
}

// startPollLocked starts it's poll under b, with a context of its own
// that it.cancel cancels while the poll runs.
func (s *Engine) startPollLocked(b *pollBound, it *item, jw *jobWait) {
	b.n++
	jw.phase = jobPolling
	ctx, cancel := context.WithCancelCause(it.ctx)
	it.cancel = cancel
	go s.poll(ctx, b, it, jw)
}

// releasePollLocked gives back a poll's place in b and starts the polls
// that are due, oldest first, while the bound has room.
func (s *Engine) releasePollLocked(b *pollBound) {
	b.n--
	for b.head < len(b.due) {
		it := b.due[b.head]
		jw := it.job
		if jw != nil && jw.phase == jobDue && !s.stoppedLocked(it, jw) {
			if b.n >= jw.job.maxPolls() {
				break
			}
			s.startPollLocked(b, it, jw)
		}
		b.due[b.head] = nil
		b.head++
	}
	if b.head == len(b.due) {
		b.due, b.head = b.due[:0], 0
	}
}

// poll runs one Await of it on a goroutine of its own, under b, and acts
// on its answer: observe.EventPolled with the outcome, then the next poll after
// the backoff delay, or the end of the Work.
func (s *Engine) poll(cctx context.Context, b *pollBound, it *item, jw *jobWait) {
	returned := false
	defer func() {
		if !returned { // Await called runtime.Goexit
			s.mu.Lock()
			s.releasePollLocked(b)
			it.cancel(nil)
			it.cancel = noCancel
			s.mu.Unlock()
			s.failJob(it, jw, classPanic)
		}
	}()
	s.labelChild()
	p, err, panicked := callAwait(cctx, jw.job, jw.handle)
	returned = true

	e := s.getEmission()
	defer putEmission(e)
	s.mu.Lock()
	s.releasePollLocked(b)
	it.cancel(nil) // the poll's context ends with the poll
	it.cancel = noCancel
	now := s.nowLocked(e)
	outcome := observe.PollOutcomeWaiting
	switch {
	case panicked:
		outcome = observe.PollOutcomeFailed
	case err != nil:
		outcome = observe.PollOutcomeError
	case p.State == PollDone:
		outcome = observe.PollOutcomeDone
	case p.State == PollFailed:
		outcome = observe.PollOutcomeFailed
	}
	e.push(it, observe.EventPolled, now).Poll = outcome
	unfinished := outcome == observe.PollOutcomeWaiting || outcome == observe.PollOutcomeError
	switch {
	case jw.stopped == jobDeadline:
		if unfinished {
			jw.phase = jobStopping
			s.unlockAndEmit(e)
			s.stopJob(it, jw) // Cancel, then failed deadline_exceeded
			return
		}
		s.endJobLocked(it, jw, StateFailed, classDeadline, "", e)
	case panicked:
		s.endJobLocked(it, jw, StateFailed, classPanic, "", e)
	case outcome == observe.PollOutcomeDone:
		// Completion wins over a cancel request, as a child's does.
		s.endJobLocked(it, jw, StateCompleted, classNone, p.Output, e)
	case outcome == observe.PollOutcomeFailed:
		s.endJobLocked(it, jw, StateFailed, jobClass(p), "", e)
	case jw.stopped != jobRuns:
		jw.phase = jobStopping
		s.unlockAndEmit(e)
		s.stopJob(it, jw) // Cancel, then cancelled
	case outcome == observe.PollOutcomeError:
		if jw.errs++; jw.errs >= jw.job.maxPollErrors() {
			s.endJobLocked(it, jw, StateFailed, classError, "", e)
			return
		}
		s.armPollLocked(it, jw, pollDelay(jw.job.Backoff, jw.delay, false))
		s.unlockAndEmit(e)
	default:
		jw.errs = 0
		s.armPollLocked(it, jw, pollDelay(jw.job.Backoff, jw.delay, p.Progress))
		s.unlockAndEmit(e)
	}
}

// callAwait calls j.Await, recovering a panic.
func callAwait(ctx context.Context, j *Job, h []byte) (p Poll, err error, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			p, err, panicked = Poll{}, nil, true
		}
	}()
	p, err = j.Await(ctx, h)
	return p, err, false
}

// Poll.Class, when it is not one of this package's classes, is kept as a
// class of its own: a process-wide table of at most maxJobClasses names,
// each a class name (Poll.Class). Any other class, and any class
// beyond the table's room, is ClassError.
const (
	jobClassBase  = 128 // termClass values from here name jobClasses entries
	maxJobClasses = 64
)

var jobClasses struct {
	mu    sync.RWMutex
	names []string
}

// jobClass returns the termClass of failed poll p's class
// (Poll.Class documents the rule).
func jobClass(p Poll) termClass {
	class := contract.PollClass(p.Class, ClassError)
	if c := classOf(class); c != classNone {
		return c
	}
	jobClasses.mu.RLock()
	for i, n := range jobClasses.names {
		if n == class {
			jobClasses.mu.RUnlock()
			return termClass(jobClassBase + i)
		}
	}
	jobClasses.mu.RUnlock()
	jobClasses.mu.Lock()
	defer jobClasses.mu.Unlock()
	for i, n := range jobClasses.names {
		if n == class {
			return termClass(jobClassBase + i)
		}
	}
	if len(jobClasses.names) >= maxJobClasses {
		return classError
	}
	jobClasses.names = append(jobClasses.names, class)
	return termClass(jobClassBase + len(jobClasses.names) - 1)
}

// jobClassName returns the name of a termClass from jobClass's table.
func jobClassName(c termClass) string {
	jobClasses.mu.RLock()
	defer jobClasses.mu.RUnlock()
	if i := int(c) - jobClassBase; i >= 0 && i < len(jobClasses.names) {
		return jobClasses.names[i]
	}
	return ""
}
