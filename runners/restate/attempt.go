package restate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

var (
	errCancelled = fmt.Errorf("agentwork: cancel requested: %w", context.Canceled)
	// errContentKey cancels a child whose guidance could not be opened.
	errContentKey = fmt.Errorf("agentwork: guidance cannot be decrypted: %w", context.Canceled)
)

// attempt runs one attempt of Work in, inside its workflow's journaled
// step: it claims the attempt on one of the target's slots (claim) and
// runs the child with a driver.Remote Execution. Its error (the claim could
// not be made, or the step was cut off) makes Restate run the step again.
func (w *Worker) attempt(rc context.Context, in workInput, pushed <-chan struct{}) (attemptResult, error) {
	t, ok := w.targets[in.Label]
	if !ok {
		return attemptResult{}, fmt.Errorf("restate: this worker has no target %q", in.Label)
	}
	// A retried step finds the attempt this Worker still holds (the
	// server lost the step's stream, not the child): rejoin.go.
	if res, ok, err := w.rejoin(rc, in.ID); ok || err != nil {
		return res, err
	}
	claim, free, err := w.claim(rc, in)
	if err != nil {
		return attemptResult{}, err
	}
	defer free()
	switch {
	case claim.Lost:
		return attemptResult{Out: runOutcome{Class: work.ClassWorkerLost, Attempt: claim.Attempt}}, nil
	case !claim.Run:
		return attemptResult{Out: runOutcome{NotRun: true}}, nil
	}
	input, err := w.cfg.ring.openString(in.ID, fieldInput, in.Input)
	if err != nil {
		w.contentError(in.ID, err)
		return attemptResult{Out: runOutcome{Class: classContentKey, Usage: &observe.Usage{}, Attempt: claim.Attempt}}, nil
	}
	a := &driver.Attempt{ID: in.ID, Owner: in.Owner, Label: in.Label, Kind: in.Kind, Depth: in.Depth, N: claim.Attempt,
		Created: in.Created, Started: claim.Started}
	defer w.running.Add(a)()
	parent, release := w.hold(rc, in.ID, claim.Attempt)
	child, cancel, stopCtx := driver.AttemptContext(context.Background(), parent, in.MaxDuration)
	defer cancel(nil)
	defer stopCtx()
	var cancelled, keyFailed atomic.Bool
	cancelReq := func() {
		if !cancelled.Swap(true) {
			w.running.Cancelled(a, time.Now())
		}
		cancel(errCancelled)
	}
	if claim.Cancel {
		cancelReq()
	}
	stopPoll := w.watch(child, in.ID, pushed, cancelReq, func() observe.Progress { return w.running.Progress(a) })
	defer stopPoll()
	out, panicked, ex, err := w.running.Run(child, a, w.cfg.Limits.Observer, driver.Remote{WorkID: in.ID, OwnerID: in.Owner, OwnerDepth: in.Depth,
		Budget: in.Budget, FailOnBudget: in.FailOnBudget,
		Guidance: func() []string {
			var r takeReply
			// No idempotency key: its retained answer would keep the texts.
			if err := w.in.object(parent, controlService, in.ID, hTake, "", nil, &r); err != nil {
				return nil // left queued for the next boundary
			}
			if r.Cancel {
				cancelReq() // done before the boundary's request goes out
			}
			msgs := make([]string, 0, len(r.Messages))
			for _, m := range r.Messages {
				text, err := w.cfg.ring.openString(in.ID, fieldGuidance, m)
				if err != nil {
					// Taken and unreadable: the Work fails (content_key)
					// rather than the child going on without it.
					w.contentError(in.ID, err)
					keyFailed.Store(true)
					cancel(errContentKey)
					return nil
				}
				msgs = append(msgs, text)
			}
			return msgs
		},
		Update: w.reportUpdate(in), AwaitAnswer: w.awaitAnswer(in.ID)}, t.Run, input)
	res := classify(child, cancelled.Load(), in, out, err, panicked, ex)
	if keyFailed.Load() {
		res = attemptResult{Out: runOutcome{Class: classContentKey, Usage: res.Out.Usage, Progress: res.Out.Progress}}
	}
	if res.Out.Class == "" {
		// Sealed in the step: its journaled result holds no plaintext.
		if res.Output, err = w.cfg.ring.sealString(in.ID, fieldOutput, res.Output); err != nil {
			w.contentError(in.ID, err)
			res = attemptResult{Out: runOutcome{Class: classContentKey, Usage: res.Out.Usage, Progress: res.Out.Progress}}
		}
	}
	res.Out.Attempt = claim.Attempt
	return release(res), nil
}

// watch calls cancelReq once the Work is cancel-requested: when pushed
// closes (its workflow saw the stop promise resolved), or, as a fallback,
// when its state, read every four poll intervals, says so. The same read
// carries the child's progress counts to the Work's control object when
// they changed since the last one it took (a Status of the running Work
// reads them there): no call of its own.
func (w *Worker) watch(ctx context.Context, id string, pushed <-chan struct{}, cancelReq func(), progress func() observe.Progress) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(4 * w.cfg.PollInterval)
		defer tick.Stop()
		var sent observe.Progress // what the control object took last
		for {
			select {
			case <-done:
				return
			case <-pushed:
				pushed = nil
				cancelReq()
				continue
			case <-tick.C:
			}
			if ctx.Err() != nil {
				continue // cancelled already: the child is finishing
			}
			var v controlView
			pctx, cancel := context.WithTimeout(ctx, w.cfg.RPCTimeout)
			var err error
			if p := progress(); p != sent {
				if err = w.in.object(pctx, controlService, id, hProg, "", p, &v); err == nil {
					sent = p
				}
			} else {
				err = w.in.object(pctx, controlService, id, hPeek, "", nil, &v)
			}
			cancel()
			if err == nil && (v.State == work.StateCancelRequested || v.State.Terminal()) {
				cancelReq()
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// classify maps a child's return to the attempt's result
// (driver.Classify): a class, never the failure's text.
func classify(child context.Context, cancelled bool, in workInput, out string, err error, panicked bool, ex *work.Execution) attemptResult {
	c := driver.Classify(child, cancelled, in.MaxResultBytes, out, err, panicked, ex)
	o := runOutcome{Class: c.Class, Bytes: c.Bytes, Usage: &c.Usage, Budget: c.Budget, Progress: c.Progress}
	if c.Class != "" {
		return attemptResult{Out: o}
	}
	return attemptResult{Out: o, Output: out}
}

// claim takes one of the target's slots and claims the attempt of Work in
// from its control object (the started marker); release frees the slot.
// A retried step whose attempt was started and not finished, with no
// attempt left (another process holds it, or held it and died), claims
// without a slot: its claim answers Busy or Lost, never Run, and the
// slots may all be held by attempts adrift of their steps (rejoin.go), so
// that waiting for one would let the rejoin window close before the step
// reached the Worker holding its attempt.
func (w *Worker) claim(rc context.Context, in workInput) (claimReply, func(), error) {
	free := w.slots[in.Label]
	release := func() { <-free }
	select {
	case free <- struct{}{}:
	default:
		var v controlView
		if err := w.in.object(rc, controlService, in.ID, hPeek, "", nil, &v); err != nil {
			return claimReply{}, nil, err
		}
		if (v.State == work.StateRunning || v.State == work.StateCancelRequested) && v.Attempt >= max(in.MaxAttempts, 1) {
			release = func() {}
			break
		}
		select {
		case free <- struct{}{}:
		case <-rc.Done():
			return claimReply{}, nil, rc.Err()
		}
	}
	var c claimReply
	if err := w.in.object(rc, controlService, in.ID, hClaim, driver.NewID(), nil, &c); err != nil {
		release()
		return claimReply{}, nil, err
	}
	if c.Busy {
		release()
		// Restate runs the step again at its retry interval: steps retried
		// in lockstep behind a round-robin balancer could each reach the
		// same process every time, never the one holding their attempt. A
		// random pause before failing breaks the lockstep.
		t := time.NewTimer(rand.N(busyJitter))
		select {
		case <-t.C:
		case <-rc.Done():
		}
		t.Stop()
		return claimReply{}, nil, errBusy
	}
	return c, release, nil
}
