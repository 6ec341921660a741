package driver

import (
	"context"
	"errors"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/observe"
)

// Submit calls j.Submit with key (the Work's id) and input in the context
// AttemptContext makes of base, parent and maxDuration, and returns the
// handle, or the class of its failure (never its text), as the in-process
// engine classifies it: a panic; the maximum duration (AttemptContext's
// cause); a cancel (parent ended) that Submit returned as
// context.Canceled, work.ClassCancelled (Settlement decides what
// it makes of the Work); any other error. A handle returned with no error
// is kept whatever ended the context: the job exists at its service.
func Submit(base, parent context.Context, j *work.Job, key, input string, maxDuration time.Duration) (handle []byte, class string) {
	ctx, cancel, stop := AttemptContext(base, parent, maxDuration)
	defer cancel(nil)
	defer stop()
	h, err, panicked := invoke(func() ([]byte, error) { return j.Submit(ctx, key, input) })
	switch {
	case panicked:
		return nil, work.ClassPanic
	case err == nil:
		return h, ""
	case errors.Is(context.Cause(ctx), errDeadline):
		return nil, work.ClassDeadline
	case parent.Err() != nil && errors.Is(err, context.Canceled):
		return nil, work.ClassCancelled
	}
	return nil, work.ClassError
}

// Await calls j.Await with handle in ctx and returns the poll's outcome (a
// work.PollOutcome* name) with the poll as the outcome reads it, as the
// in-process engine does: a panic is a failed poll of class
// work.ClassPanic; a Go error is a transient poll error (its text stays
// with the caller; the poll is zero); a done poll keeps its output, a
// failed one its class (work.Poll.Class: a class never carries
// text or an id); and any other
// state, unknown ones included, is waiting, with its progress.
func Await(ctx context.Context, j *work.Job, handle []byte) (outcome string, p work.Poll) {
	p, err, panicked := invoke(func() (work.Poll, error) { return j.Await(ctx, handle) })
	switch {
	case panicked:
		return observe.PollOutcomeFailed, work.Poll{State: work.PollFailed, Class: work.ClassPanic}
	case err != nil:
		return observe.PollOutcomeError, work.Poll{}
	case p.State == work.PollDone:
		return observe.PollOutcomeDone, work.Poll{State: work.PollDone, Output: p.Output}
	case p.State == work.PollFailed:
		return observe.PollOutcomeFailed, work.Poll{State: work.PollFailed, Class: contract.PollClass(p.Class, work.ClassError)}
	}
	return observe.PollOutcomeWaiting, work.Poll{State: work.PollWaiting, Progress: p.Progress}
}

// CancelJob calls j.Cancel with handle in ctx, if j has one, recovering
// a panic in it. Nothing of its end is reported: the Work ends as its
// engine decided whatever Cancel does, as in-process. A nil j does nothing.
func CancelJob(ctx context.Context, j *work.Job, handle []byte) {
	if j == nil || j.Cancel == nil {
		return
	}
	defer func() { _ = recover() }()
	_ = j.Cancel(ctx, handle)
}

// JobWait is an external job's state between its polls, as a durable
// engine keeps it (a workflow's state, carried across continue-as-new,
// or the locals a journal's replay rebuilds): the backoff's last delay,
// whether the last poll reported progress, and the consecutive poll
// errors. The zero value is a job before its first poll. Its methods are
// deterministic (no clock, no goroutine, no map), so a Temporal workflow
// calls them; a JobWait is not safe for concurrent use.
type JobWait struct {
	Delay    time.Duration // the last delay (0 before the first poll)
	Progress bool          // the last poll reported progress
	Errors   int           // consecutive poll errors
}

// Next returns the delay before the next poll under b, after the last
// delay and progress (1 s doubling to 30 s by default, back to the
// initial delay after progress), and records it as the last delay.
func (s *JobWait) Next(b work.Backoff) time.Duration {
	s.Delay = contract.PollDelay(b.Initial, b.Max, s.Delay, s.Progress)
	return s.Delay
}

// JobPoll is one poll as Polled reads it: its outcome (a
// work.PollOutcome* name), a failed job's class, a waiting job's
// progress, and a done job's output size.
type JobPoll struct {
	Outcome  string
	Class    string
	Progress bool
	Bytes    int
}

// JobEnd is how an external job's Work ends: the class of its end as an
// attempt's (Settlement maps it to the Work's state and class; "" when
// the job completed), the output's size (completed or
// work.ClassResultTooLarge), and whether the job is cancelled at its
// service first.
type JobEnd struct {
	Class  string
	Bytes  int
	Cancel bool
}

// Polled records poll p and returns how the Work ends, if it does (ok),
// deciding in the in-process engine's order: an answer that arrives past
// the Work's deadline (past) decides nothing: the Work fails
// work.ClassDeadline, and the job is cancelled at its service when the
// answer left it unfinished (waiting or a poll error); a done job
// completes (over a cancel request, as a child's completion does), or
// fails work.ClassResultTooLarge when its output is over maxResultBytes
// (when positive); a failed job fails with its class (work.ClassError
// when it has none); an unfinished job whose Work is cancel-requested
// (stop) is cancelled, work.ClassCancelled; a poll error that makes
// maxErrors consecutive ones (ResolveJob's default when not
// positive) fails it work.ClassError, and clears the progress; a waiting
// poll clears the errors and records its progress for the next delay
// (Next).
func (s *JobWait) Polled(p JobPoll, maxResultBytes, maxErrors int, past, stop bool) (end JobEnd, ok bool) {
	switch {
	case past:
		unfinished := p.Outcome == observe.PollOutcomeWaiting || p.Outcome == observe.PollOutcomeError
		return JobEnd{Class: work.ClassDeadline, Cancel: unfinished}, true
	case p.Outcome == observe.PollOutcomeDone:
		if maxResultBytes > 0 && p.Bytes > maxResultBytes {
			return JobEnd{Class: work.ClassResultTooLarge, Bytes: p.Bytes}, true
		}
		return JobEnd{Bytes: p.Bytes}, true
	case p.Outcome == observe.PollOutcomeFailed:
		class := p.Class
		if class == "" {
			class = work.ClassError
		}
		return JobEnd{Class: class}, true
	case stop:
		return JobEnd{Class: work.ClassCancelled, Cancel: true}, true
	case p.Outcome == observe.PollOutcomeError:
		if maxErrors <= 0 {
			maxErrors = ResolveJob(work.Job{}).MaxPollErrors
		}
		s.Errors++
		s.Progress = false
		if s.Errors >= maxErrors {
			return JobEnd{Class: work.ClassError}, true
		}
		return JobEnd{}, false
	}
	s.Errors, s.Progress = 0, p.Progress
	return JobEnd{}, false
}

// PastDeadline reports whether now is at or past a Work's deadline (the
// zero deadline: none). It is the one rule of a job's deadline on every
// engine: once it has passed no poll starts (the job is cancelled at its
// service and the Work fails work.ClassDeadline, also when Submit
// returned its handle late), and a poll's answer that arrives after it
// decides nothing (Polled).
func PastDeadline(now, deadline time.Time) bool {
	return !deadline.IsZero() && !now.Before(deadline)
}
