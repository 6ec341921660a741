package temporal

import (
	"context"
	"slices"
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// External jobs in the Work workflow, as the package doc's "Work that
// waits" says: the handle and the backoff are workflow state, carried
// across continue-as-new every PollsPerRun polls (jobState).

// Timeouts of a job's activities: a poll and a cancel are short calls;
// their Worker's loss shows within the heartbeat timeout.
const (
	pollTimeout = time.Minute
	// submitAttempts bounds the tries of a submit whose Worker died (a
	// Go error from Submit is not retried: the Work fails).
	submitAttempts = 3
	// cancelAttempts bounds the tries of a cancel whose Worker died.
	cancelAttempts = 3
)

// defaultPollsPerRun is how many polls a waiting job's workflow makes
// before it continues as new (WithPollsPerRun).
const defaultPollsPerRun = 500

// resume restores a continued run's state (a no-op for a first run).
func (w *workRun) resume() {
	c := w.in.Cont
	if c == nil {
		return
	}
	w.State, w.Attempt, w.Started, w.Rev, w.Detached = c.State, c.Attempt, c.Started, c.Rev, c.Detached
	w.Waiting = true
}

// runJob runs an external job to its end, or returns the continue-as-new
// error of its next run (cont).
func (w *workRun) runJob(ctx, actx workflow.Context) (res workOutcome, cont error) {
	in, j := w.in, w.in.Job
	w.Spent = &observe.Usage{} // a job spends no model budget
	var st jobState
	if in.Cont != nil {
		st = *in.Cont
	} else {
		if w.State == work.StateCancelled { // cancelled, denied or timed out before it ran
			return workOutcome{State: work.StateCancelled}, nil
		}
		ao := workflow.ActivityOptions{
			TaskQueue:           in.TaskQueue,
			StartToCloseTimeout: startToClose(in.MaxDuration),
			HeartbeatTimeout:    in.HeartbeatTimeout,
			WaitForCancellation: true,
			RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: submitAttempts},
		}
		var out submitOutcome
		err := workflow.ExecuteActivity(workflow.WithActivityOptions(actx, ao), SubmitActivityName, submitInput{
			ID: in.ID, Owner: in.Owner, Depth: in.Depth, Label: in.Label, Input: in.Input,
			MaxDuration: in.MaxDuration}).Get(ctx, &out)
		switch {
		case err != nil:
			return w.settle(runOutcome{}, err), nil
		case out.Class != "":
			return w.settle(runOutcome{Class: out.Class}, nil), nil
		}
		st.Handle = out.Handle
		w.Waiting = true
		if w.State == work.StateRunning { // else cancelled during the submit: the loop cancels the job
			w.ev.emit(ctx, observe.Event{Type: observe.EventWaiting})
			w.notify(ctx)
		}
	}
	var deadline time.Time
	if in.MaxDuration > 0 {
		deadline = w.Started.Add(in.MaxDuration)
	}
	pctx := w.onPollQueue(ctx, 1)
	for polls := 0; ; polls++ {
		if w.State != work.StateRunning { // cancel-requested (Cancel, Release)
			w.cancelJob(ctx, st.Handle)
			return workOutcome{State: work.StateCancelled}, nil
		}
		if polls >= max(j.PollsPerRun, 1) {
			return workOutcome{}, w.continueJob(ctx, st)
		}
		wait := st.Next(j.Backoff)
		if !deadline.IsZero() {
			wait = min(wait, deadline.Sub(workflow.Now(ctx)))
		}
		if wait > 0 {
			// A workflow timer, cancelled when a cancel arrives first.
			_, _ = workflow.AwaitWithTimeout(ctx, wait, func() bool { return w.State != work.StateRunning })
		}
		if w.State != work.StateRunning {
			continue
		}
		// Past the deadline no poll starts: the job is cancelled and the
		// Work fails. (Before jobDeadlineChange a job whose first poll was
		// due past it, its submit having taken the rest, was polled once.)
		if driver.PastDeadline(workflow.Now(ctx), deadline) && (st.Polls > 0 || deadlineRule(ctx)) {
			w.cancelJob(ctx, st.Handle)
			return workOutcome{State: work.StateFailed, Class: work.ClassDeadline}, nil
		}
		var p pollOutcome
		if err := workflow.ExecuteActivity(pctx, AwaitActivityName, awaitInput{Label: in.Label, Handle: st.Handle}).Get(ctx, &p); err != nil {
			p = pollOutcome{Err: true} // a timeout, or no Worker had the job
		}
		st.Polls++
		o := p.decoded()
		w.ev.emit(ctx, observe.Event{Type: observe.EventPolled, Poll: o.Outcome})
		// An answer that arrives past the deadline decides nothing (before
		// jobDeadlineChange it did). The completion wins a cancel that
		// arrived during the poll.
		past := driver.PastDeadline(workflow.Now(ctx), deadline) && deadlineRule(ctx)
		if end, ok := st.Polled(o, in.MaxResultBytes, j.MaxPollErrors, past, false); ok {
			if end.Cancel {
				w.cancelJob(ctx, st.Handle)
			}
			if end.Class == "" {
				return workOutcome{State: work.StateCompleted, Output: p.Output, Bytes: end.Bytes}, nil
			}
			return workOutcome{State: work.StateFailed, Class: end.Class, Bytes: end.Bytes}, nil
		}
	}
}

// jobDeadlineChange marks the workflows whose jobs follow the one
// deadline rule (driver.PastDeadline): past the deadline no poll starts,
// not even a first one, and an answer that arrives past it decides
// nothing. Histories from before it (workflow.GetVersion) replay
// without: a first poll due past the deadline ran, and an answer decided
// whenever it arrived.
const jobDeadlineChange = "agentwork-job-deadline"

// deadlineRule reports whether this workflow follows jobDeadlineChange.
// It is asked only where the rule and the one before it differ, so a
// job that never meets its deadline records no marker.
func deadlineRule(ctx workflow.Context) bool {
	return workflow.GetVersion(ctx, jobDeadlineChange, workflow.DefaultVersion, 1) >= 1
}

// decoded is the poll p as driver.JobWait.Polled reads it.
func (p pollOutcome) decoded() driver.JobPoll {
	o := driver.JobPoll{Outcome: observe.PollOutcomeWaiting, Class: p.Class, Progress: p.Progress, Bytes: len(p.Output)}
	switch {
	case p.Err:
		o.Outcome = observe.PollOutcomeError
	case p.State == work.PollDone:
		o.Outcome = observe.PollOutcomeDone
	case p.State == work.PollFailed:
		o.Outcome = observe.PollOutcomeFailed
	}
	return o
}

// startToClose is the start-to-close timeout of a Work's attempt (its
// Run, a Rejoin of it, or its job's Submit): its maximum duration and a
// minute, a year with none.
func startToClose(maxDur time.Duration) time.Duration {
	if maxDur > 0 {
		return maxDur + time.Minute
	}
	return 365 * 24 * time.Hour
}

// cancelJob asks the job's service to stop it, through the target's
// Cancel on a Worker (a no-op there when the job has none). Its failure
// is not the Work's: the Work ends as decided.
func (w *workRun) cancelJob(ctx workflow.Context, handle []byte) {
	_ = workflow.ExecuteActivity(w.onPollQueue(ctx, cancelAttempts), CancelJobActivityName,
		awaitInput{Label: w.in.Label, Handle: handle}).Get(ctx, nil)
}

// onPollQueue is ctx with the activity options of a job's poll or cancel:
// on the target's poll queue, a minute at most (pollTimeout), heartbeating,
// tried at most attempts times.
func (w *workRun) onPollQueue(ctx workflow.Context, attempts int32) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{TaskQueue: w.in.Job.PollQueue,
		StartToCloseTimeout: pollTimeout, HeartbeatTimeout: w.in.HeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: attempts}})
}

// continueJob returns the error that continues the workflow as new with
// the job's state, once the handlers in progress have finished. The
// span's context stays in this process for the next run (spanStash).
func (w *workRun) continueJob(ctx workflow.Context, st jobState) error {
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	st.State, st.Attempt, st.Started, st.Rev, st.Detached = w.State, w.Attempt, w.Started, w.Rev, w.Detached
	w.ev.keep()
	in := w.in
	in.Cont = &st
	in.Carry = w.carryUpdates() // workflow_updates.go
	return workflow.NewContinueAsNewError(ctx, WorkWorkflowName, in)
}

// spanStash is a Worker's memory of the spans it reported: the span
// contexts of Work whose workflow continued as new there, until the next
// run binds them (at its first live event), and, apart (so that neither
// evicts the other), the workflow runs whose terminal event it reported
// live (lifecycle.emit), so that a workflow task that reported it and was
// then lost (it timed out, or the server refused its completion) does not
// report it again when it runs anew here: the span was ended and exported
// once. A next run that runs on another Worker binds a new span from its
// own history (as a replay does). Each is bounded (maxStashed, the oldest
// evicted first; a stashed span then goes unexported).
type spanStash struct {
	mu    sync.Mutex
	spans bounded[context.Context]
	ends  bounded[observe.Event]
}

const maxStashed = 1024

func newSpanStash() *spanStash { return &spanStash{} }

// put stashes the span context of Work id's run that continues as new.
func (s *spanStash) put(id string, ctx context.Context) {
	if s != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.spans.set(id, ctx)
	}
}

// take returns and forgets the span context stashed for Work id.
func (s *spanStash) take(id string) (context.Context, bool) {
	if s == nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.spans.take(id)
}

// end records that the terminal event e of workflow run run was
// reported here.
func (s *spanStash) end(run string, e observe.Event) {
	if s != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.ends.set(run, e)
	}
}

// ended returns the terminal event reported here for workflow run run.
func (s *spanStash) ended(run string) (observe.Event, bool) {
	if s == nil {
		return observe.Event{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.ends.m[run]
	return e, ok
}

// bounded is a map of at most maxStashed entries, the oldest evicted
// first; its zero value is empty.
type bounded[V any] struct {
	m     map[string]V
	order []string
}

func (b *bounded[V]) set(k string, v V) {
	if b.m == nil {
		b.m = map[string]V{}
	}
	if _, ok := b.m[k]; !ok {
		b.order = append(b.order, k)
	}
	b.m[k] = v
	for len(b.order) > maxStashed {
		delete(b.m, b.order[0])
		b.order = b.order[1:]
	}
}

func (b *bounded[V]) take(k string) (V, bool) {
	v, ok := b.m[k]
	if ok {
		delete(b.m, k)
		if i := slices.Index(b.order, k); i >= 0 {
			b.order = slices.Delete(b.order, i, i+1)
		}
	}
	return v, ok
}

// keep stashes the bound span context of a run that continues as new
// live (a replayed continue stashes nothing: its span is elsewhere).
func (l *lifecycle) keep() {
	if l.obs != nil && l.queued.Type == "" && !l.ended {
		l.stash.put(l.base.WorkID, l.ctx)
	}
}

// bindCtx binds the Work for its first live event: the span its earlier
// run left in this process, or a new one (Observer.Bind with q).
func (l *lifecycle) bindCtx(q observe.Event) context.Context {
	if ctx, ok := l.stash.take(l.base.WorkID); ok {
		return ctx
	}
	return l.obs.Bind(l.launch.caller(), context.Background(), q)
}
