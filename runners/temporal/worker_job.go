package temporal

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// registerJob registers a job target's activities: Submit on the target's
// queue worker aw (it holds one of its running slots), Await and
// CancelJob on a worker of the target's poll queue, bounded by the job's
// MaxPolls (the Worker's own bound: Temporal has no global one).
func (w *Worker) registerJob(aw worker.Worker, label string, j *work.Job) {
	aw.RegisterActivityWithOptions(w.submit, activity.RegisterOptions{Name: SubmitActivityName})
	pw := w.activityWorker(pollQueue(w.cfg.taskQueue, label), driver.ResolveJob(*j).MaxPolls)
	pw.RegisterActivityWithOptions(w.await, activity.RegisterOptions{Name: AwaitActivityName})
	pw.RegisterActivityWithOptions(w.cancelJob, activity.RegisterOptions{Name: CancelJobActivityName})
}

// keepAlive heartbeats the activity of ctx now and at a third of the
// heartbeat timeout until stop is called. The heartbeats are recorded
// without ctx's cancellation (see run), which they still bring.
func (w *Worker) keepAlive(ctx context.Context) (stop func()) {
	hbCtx := context.WithoutCancel(ctx)
	activity.RecordHeartbeat(hbCtx)
	return w.beat(func() { activity.RecordHeartbeat(hbCtx) })
}

// beat calls heartbeat at every third of the heartbeat timeout (20 ms at
// least), from a goroutine of its own, until stop is called; stop waits
// for a call in progress.
func (w *Worker) beat(heartbeat func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(max(w.cfg.heartbeatTimeout/3, 20*time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				heartbeat()
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// submit is a job's submit: announce the attempt (the Work runs), call
// the target's Submit with the Work's id as the idempotency key, and
// return the handle or a class (never failure text). Cancellation
// reaches Submit's context through the heartbeat; a handle it returns all
// the same is kept, and the job is then cancelled.
func (w *Worker) submit(ctx context.Context, in submitInput) (submitOutcome, error) {
	t, ok := w.targets[in.Label]
	if !ok || t.Job == nil {
		return submitOutcome{Class: work.ClassError}, nil // this deployment's Workers disagree on the target
	}
	// The submit holds one of its target's slots here until it returns
	// (Snapshot), as a Run attempt does; a poll or a cancel of the job
	// holds none (it runs on the poll queue).
	info := activity.GetInfo(ctx)
	slot := &driver.Attempt{ID: in.ID, Owner: in.Owner, Label: in.Label, Kind: work.KindFunction, Depth: in.Depth,
		N: int(info.Attempt), Created: info.ScheduledTime, Started: info.StartedTime}
	defer w.slots.Add(slot)()
	stopCancelAt := context.AfterFunc(ctx, func() { w.slots.Cancelled(slot, time.Now()) })
	defer stopCancelAt()
	defer w.keepAlive(ctx)()
	var started startedReply
	if err := retry(ctx, w.cfg.RPCTimeout, 0, func(ctx context.Context) error {
		return update(ctx, w.c, in.ID, updateStarted, &started, int(activity.GetInfo(ctx).Attempt))
	}); err != nil {
		return submitOutcome{}, err
	}
	if !started.Run {
		return submitOutcome{Class: classNotRun}, nil
	}
	stopAnnounce := w.announce(ctx, started)
	defer stopAnnounce()
	h, class := driver.Submit(ctx, ctx, t.Job, in.ID, in.Input, in.MaxDuration)
	return submitOutcome{Handle: h, Class: class}, nil
}

// await is one poll: the target's Await on the handle (driver.Await). A
// Go error is a transient poll error (Err); its text stays here.
func (w *Worker) await(ctx context.Context, in awaitInput) (pollOutcome, error) {
	t, ok := w.targets[in.Label]
	if !ok || t.Job == nil {
		return pollOutcome{Err: true}, nil
	}
	defer w.keepAlive(ctx)()
	o, p := driver.Await(ctx, t.Job, in.Handle)
	return pollOutcome{State: p.State, Output: p.Output, Class: p.Class, Progress: p.Progress, Err: o == observe.PollOutcomeError}, nil
}

// cancelJob calls the target's Cancel on the handle, if it has one. Its
// error is not reported: the Work ends as its workflow decided.
func (w *Worker) cancelJob(ctx context.Context, in awaitInput) error {
	t, ok := w.targets[in.Label]
	if !ok || t.Job == nil || t.Job.Cancel == nil {
		return nil
	}
	defer w.keepAlive(ctx)()
	driver.CancelJob(ctx, t.Job, in.Handle)
	return nil
}
