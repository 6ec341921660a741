package restate

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// The rejoin rule is the package doc's (Mapping). A retried step whose
// claim is Busy fails, and Restate runs it again (every two seconds at
// most, through the balancer) until it reaches the Worker holding the
// attempt; a held attempt no retry took back within a rejoin window (and
// an RPC timeout) of the server answering again is cancelled.

// rejoinWindow is how long the retries of a step whose attempt is
// unfinished look for the Worker holding it.
const rejoinWindow = 30 * time.Second

// heldFor is how long a Worker keeps a finished attempt's result for a
// retried step: longer than Restate 1.7 takes to notice a dead HTTP/2
// connection to a deployment and retry (measured: 61 s quiet, 4m14s loaded;
// docs/chaos-durable.md).
const heldFor = 10 * time.Minute

// busyJitter bounds the random pause before a Busy claim fails its step
// (claim): about the step's retry interval, so that retried steps leave
// lockstep.
const busyJitter = time.Second

// errBusy fails a step whose claim found the attempt held elsewhere:
// Restate runs the step again.
var errBusy = errors.New("restate: the attempt is held by another process (rejoin window)")

// heldAttempt is an attempt a Worker runs, as a retried step finds it
// (its take-backs).
type heldAttempt = driver.HeldAttempt[attemptResult]

// rejoin takes back the attempt of Work id this Worker holds, when it is
// the Work's current attempt and still running: it waits for the child
// and returns its result (ok true). rc is the retried step's context.
func (w *Worker) rejoin(rc context.Context, id string) (attemptResult, bool, error) {
	a, ok := w.held.Get(id)
	if !ok {
		return attemptResult{}, false, nil
	}
	var v controlView
	if err := w.in.object(rc, controlService, id, hPeek, "", nil, &v); err != nil {
		return attemptResult{}, false, err
	}
	if v.Attempt != a.N || (v.State != work.StateRunning && v.State != work.StateCancelRequested) {
		return attemptResult{}, false, nil
	}
	a.Taken.Add(1)
	select {
	case <-a.Done():
		return a.Outcome(), true, nil
	case <-rc.Done():
		w.adrift(a) // lost again: another retry may take it
		return attemptResult{}, true, rc.Err()
	}
}

// hold registers an attempt and returns its child's parent context: it
// ends only with cut, never with the step's context rc (see adrift).
// release records the result; the Worker keeps it a window long.
func (w *Worker) hold(rc context.Context, id string, n int) (context.Context, func(attemptResult) attemptResult) {
	parent, cut := context.WithCancelCause(context.Background())
	a := driver.NewHeldAttempt[attemptResult](id, n, cut)
	w.held.Put(id, a)
	stop := context.AfterFunc(rc, func() { w.adrift(a) })
	return parent, func(res attemptResult) attemptResult {
		stop()
		if errors.Is(context.Cause(parent), driver.ErrUnreachable) {
			res = attemptResult{Out: runOutcome{Class: driver.ClassUnreachable, Attempt: res.Out.Attempt, Usage: res.Out.Usage}}
		}
		a.Finish(res)
		// The step's result may not reach the server (the stream is
		// cut): its retry comes once the server noticed the dead
		// connection, minutes later (see heldFor), and, when the server
		// was away meanwhile, only once it answers again
		// (driver.Adrift.Keep).
		w.adrifts.Keep(max(heldFor, 2*rejoinWindow+w.cfg.RPCTimeout), w.serverAnswers, func() { w.held.Remove(id, a) })
		return res
	}
}

// adrift watches an attempt whose step's context ended before the child
// returned: once the server answers again, a rejoin window (and an RPC
// timeout) without a retry taking it back cancels the child with
// driver.ErrUnreachable; the Worker's stop cancels it at once.
func (w *Worker) adrift(a *heldAttempt) {
	w.adrifts.Watch(a.Taken.Load, a.Done(), w.serverAnswers, rejoinWindow+w.cfg.RPCTimeout, a.Cut)
}

// serverAnswers reports whether Restate's ingress answers its health
// check now.
func (w *Worker) serverAnswers() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.in.base+"/restate/health", nil)
	if err != nil {
		return false
	}
	resp, err := w.in.hc.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode/100 == 2
}
