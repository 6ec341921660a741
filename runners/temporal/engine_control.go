package temporal

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// CancelWork sends the cancel update to the Work's workflow, whose reply
// is the cancel's decision. A running child learns it through its
// heartbeat (cooperative cancellation). A run that closed while the Work
// is live continued as new (a waiting job): driver.ErrRunEnded, and the
// next ask reaches the next run.
func (s *store) CancelWork(ctx context.Context, o work.Owner, id string) (work.CancelReceipt, error) {
	e := (*engine)(s)
	var r driver.CancelReply
	if err := e.update(ctx, id, updateCancel, &r, o.ID()); err != nil {
		if errors.Is(err, errWorkflowClosed) {
			return work.CancelReceipt{}, driver.ErrRunEnded
		}
		return work.CancelReceipt{}, err
	}
	return r.Receipt(id), nil
}

// DetachLive asks a live Work's workflow to detach it from o; false
// when its workflow has closed meanwhile.
func (s *store) DetachLive(ctx context.Context, o work.Owner, id string) (bool, error) {
	e := (*engine)(s)
	err := e.update(ctx, id, updateDetach, nil, o.ID())
	if errors.Is(err, errWorkflowClosed) {
		return false, nil
	}
	return err == nil, err
}

// ForgetSettled tells o's registry to forget a finished Work (its
// workflow has closed, or is closing).
func (s *store) ForgetSettled(ctx context.Context, o work.Owner, id string) error {
	return (*engine)(s).tell(ctx, o, updateDetached, id)
}

// SendGuidance queues g for the Work. The text is the input of a holder
// workflow of its own (agentwork.Guidance), never in the Work's history;
// the holder deletes its execution, history included, once the child has
// taken the text, the Work ended without taking it, or the message was
// refused or is a repeated command, and at the latest a week and the
// maximum duration after it was sent (a safety net). Configure a payload
// codec on the client to encrypt it meanwhile. A Work whose workflow has
// ended answers a repeated command from its command records.
func (s *store) SendGuidance(ctx context.Context, o work.Owner, rec ownerRecord, g driver.Guidance) (int, time.Time, error) {
	e := (*engine)(s)
	id := rec.ID
	req := sendRequest{Owner: o.ID(), Bytes: len(g.Text), Answer: g.Answer, Digest: g.Digest, Command: g.Command}
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	var r sendReply
	var err error
	if !rec.State.Terminal() {
		// The holder first: once the Work has the reference, the text must
		// exist. A holder the Work did not keep is told it is done.
		req.Ref = guidanceWorkflowID(id)
		ttl := guidanceTTL + e.cfg.Limits.MaxDuration
		_, err = e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: req.Ref, TaskQueue: e.cfg.taskQueue},
			GuidanceWorkflowName, guidanceInput{Text: g.Text, TTL: ttl})
		if err != nil {
			return 0, time.Time{}, fromTemporal(err)
		}
		err = e.update(ctx, id, updateSend, &r, req)
		if err != nil || r.Ref != req.Ref {
			// On the caller's values, without its cancellation: a holder
			// left running holds the text until its safety net.
			sctx, scancel := e.rpc(context.WithoutCancel(ctx))
			_ = e.c.SignalWorkflow(sctx, req.Ref, "", signalDone, nil)
			scancel()
		}
	}
	if rec.State.Terminal() || errors.Is(err, errWorkflowClosed) {
		// The workflow has ended: a replay still gets its receipt.
		if req.Command == "" {
			return 0, time.Time{}, work.ErrTerminal
		}
		var c driver.Command
		if qerr := e.queryWork(ctx, id, queryCommand, &c, req.Command); qerr != nil {
			return 0, time.Time{}, qerr
		}
		switch {
		case c.Digest == "":
			return 0, time.Time{}, work.ErrTerminal
		case c.Digest != req.Digest:
			return 0, time.Time{}, work.ErrConflict
		}
		r, err = c.Reply, nil
	}
	if err != nil {
		return 0, time.Time{}, err
	}
	return r.Cursor, r.At, nil
}

// ReleaseOwner releases o in its registry workflow (an owner with no
// registry, nothing started, is released with no error).
func (s *store) ReleaseOwner(ctx context.Context, o work.Owner) error {
	err := (*engine)(s).update(ctx, ownerWorkflowID(o.ID()), updateRelease, nil)
	if errors.Is(err, work.ErrNotFound) {
		return nil // no registry: nothing of o's to release
	}
	return err
}

// SetPool keeps o's pool in its registry workflow (started if needed):
// each Work o starts reserves its budget from it at admission, and is
// refunded what it did not spend when it settles; a Work whose attempt
// died with its worker is charged its whole reservation (its usage is
// unknown).
func (s *store) SetPool(ctx context.Context, o work.Owner, b work.Budget) error {
	e := (*engine)(s)
	rctx, cancel := e.rpc(ctx)
	defer cancel()
	return timedOut(ctx, fromTemporal(e.updateOwner(rctx, o, updatePool, nil, driver.BudgetDims(b), "")))
}
