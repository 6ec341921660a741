package temporal

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/agentwork/agentwork/work/driver"
)

// The rejoin rule is the package doc's (Mapping): a Worker holds an
// attempt the server timed out by its heartbeat (its child may still run,
// or have ended), and the Rejoin activity its Work's workflow sends to the
// Worker's rejoin queue heartbeats for the attempt, brings it
// cancellation and returns its outcome.

// rejoinActivityName is the activity that rejoins an attempt the server
// timed out on the Worker that still holds it.
const rejoinActivityName = "agentwork.Rejoin"

// errNotHere is the Rejoin's failure type when the Worker does not hold
// the attempt (it restarted, or never had it).
const errNotHere = "agentwork.not_here"

// rejoinWindow is how long a Work's workflow waits for the Worker of an
// attempt timed out by its heartbeat to take the Rejoin (the Worker's
// reconnection after a server restart): twice the heartbeat timeout, at
// least 30 s. A Worker that died is reported worker_lost that much later.
func rejoinWindow(hb time.Duration) time.Duration { return max(2*hb, 30*time.Second) }

type rejoinInput struct {
	ID      string
	Attempt int
}

// heldKey is a held attempt's key: its Work and its attempt number (a
// retried Work's attempts may meet on one Worker).
func heldKey(id string, n int) string { return id + "/" + strconv.Itoa(n) }

// rejoinQueueName is a new Worker's own rejoin queue on the deployment's
// task queue, named with a random id (driver.NewID).
func rejoinQueueName(taskQueue string) string { return taskQueue + ":rejoin:" + driver.NewID() }

// heldAttempt is an attempt a Worker runs, as a Rejoin finds it (its
// take-backs), and where its heartbeats go now (hb): the attempt's own
// activity, a Rejoin's, or nowhere (nil) while adrift.
type heldAttempt struct {
	*driver.HeldAttempt[runOutcome]
	hb atomic.Pointer[context.Context]
}

// serviceLost reports whether the attempt's context ctx ended because
// the server could not be reached or no longer knows the attempt (the
// SDK cancels it after failed heartbeats for the heartbeat timeout, or on
// a heartbeat answered NotFound), not because of a cancel, the Worker's
// stop or the attempt's own deadline.
func serviceLost(ctx context.Context) bool {
	cause := context.Cause(ctx)
	var (
		canceled *temporal.CanceledError
		notFound *serviceerror.NotFound
		unavail  *serviceerror.Unavailable
		deadline *serviceerror.DeadlineExceeded
	)
	switch {
	case cause == nil, errors.As(cause, &canceled), errors.Is(cause, context.Canceled):
		return false
	case errors.As(cause, &notFound), errors.As(cause, &unavail), errors.As(cause, &deadline):
		return true
	case errors.Is(cause, context.DeadlineExceeded):
		// A heartbeat's own call timed out, unless the attempt's deadline
		// (its start-to-close timeout) is what passed.
		d, ok := ctx.Deadline()
		return !ok || time.Now().Before(d)
	}
	return false
}

// hold registers an attempt the Worker runs and returns it with the
// child's parent context: it ends with the attempt's context, except
// when that ends because the server was lost (the attempt is then held
// adrift for a Rejoin, see watchAdrift). release must be called with
// the outcome when the child returned.
func (w *Worker) hold(ctx context.Context, id string, n int) (*heldAttempt, context.Context, func(runOutcome)) {
	hbCtx := context.WithoutCancel(ctx)
	parent, cut := context.WithCancelCause(hbCtx)
	a := &heldAttempt{HeldAttempt: driver.NewHeldAttempt[runOutcome](id, n, cut)}
	a.hb.Store(&hbCtx)
	w.held.Put(heldKey(id, n), a)
	stop := context.AfterFunc(ctx, func() {
		if serviceLost(ctx) && parent.Err() == nil {
			a.hb.Store(nil)
			w.watchAdrift(a)
			return
		}
		cut(context.Cause(ctx))
	})
	return a, parent, func(out runOutcome) {
		stop()
		a.Finish(out)
		w.keep(a)
	}
}

// keep keeps a returned attempt's outcome for a Rejoin: its completion
// may not reach the server (it is away, or its answer is lost), and a
// Rejoin the server then loses (it was dispatched to a poll the cut held)
// may be followed by another: each gets it. It is kept a rejoin window
// and a heartbeat timeout, counted from when the server answers again
// when it was lost meanwhile (driver.Adrift.Keep).
func (w *Worker) keep(a *heldAttempt) {
	w.adrift.Keep(rejoinWindow(w.cfg.heartbeatTimeout)+w.cfg.heartbeatTimeout, w.serverAnswers,
		func() { w.held.Remove(heldKey(a.ID, a.N), a) })
}

// heartbeat records a heartbeat for a, with its details, wherever its
// heartbeats go now (nowhere while it is adrift).
func (a *heldAttempt) heartbeat(details ...any) {
	if c := a.hb.Load(); c != nil {
		activity.RecordHeartbeat(*c, details...)
	}
}

// watchAdrift waits, for an attempt the server lost, until a Rejoin takes
// it; once the server answers again, a rejoin window (and a heartbeat
// timeout) without one cancels the child with class unreachable (the
// Worker keeps its outcome a while longer, see hold).
func (w *Worker) watchAdrift(a *heldAttempt) {
	w.adrift.Watch(a.Taken.Load, a.Done(), w.serverAnswers, rejoinWindow(w.cfg.heartbeatTimeout)+w.cfg.heartbeatTimeout, a.Cut)
}

// serverAnswers reports whether the Temporal server answers its health
// check now.
func (w *Worker) serverAnswers() bool {
	ctx, cancel := context.WithTimeout(context.Background(), w.cfg.RPCTimeout)
	defer cancel()
	_, err := w.c.CheckHealth(ctx, nil)
	return err == nil
}

// rejoin is the Rejoin activity: it attaches to the attempt this Worker
// holds (heartbeats and cancellation now go through this activity) and
// returns its outcome when the child returns.
func (w *Worker) rejoin(ctx context.Context, in rejoinInput) (runOutcome, error) {
	// The attempt's own task may reach this Worker just after the Rejoin
	// (both held by the same cut): wait a moment for it.
	var a *heldAttempt
	for deadline := time.Now().Add(w.cfg.heartbeatTimeout / 2); ; time.Sleep(50 * time.Millisecond) {
		var ok bool
		if a, ok = w.held.Get(heldKey(in.ID, in.Attempt)); ok || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
	}
	if a == nil {
		return runOutcome{}, temporal.NewNonRetryableApplicationError("the attempt is not held by this worker", errNotHere, nil)
	}
	a.Taken.Add(1)
	hbCtx := context.WithoutCancel(ctx)
	a.hb.Store(&hbCtx)
	stop := context.AfterFunc(ctx, func() {
		if serviceLost(ctx) {
			a.hb.Store(nil)
			w.watchAdrift(a) // lost again: another Rejoin may come
			return
		}
		a.Cut(context.Cause(ctx))
	})
	defer stop()
	<-a.Done()
	return a.Outcome(), nil
}
