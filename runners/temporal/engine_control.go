package temporal

import (
	"context"
	"errors"
	"strconv"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/agentwork/agentwork/internal/durable"
	"github.com/agentwork/agentwork/work"
)

// Cancel asks for a Work to stop, as work.Supervisor.Cancel. A running
// child learns it through its heartbeat (cooperative cancellation).
func (e *Engine) Cancel(ctx context.Context, o work.Owner, id string) (work.CancelReceipt, error) {
	rec, err := e.lookup(ctx, o, id)
	if err != nil {
		return work.CancelReceipt{}, err
	}
	if rec.State.Terminal() {
		return work.CancelReceipt{WorkID: id, State: rec.State, AcceptedAt: time.Now()}, nil
	}
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	var r cancelReply
	for try := 1; ; try++ {
		err := e.update(ctx, id, updateCancel, &r, o.ID())
		if err == nil {
			break
		}
		if !errors.Is(err, errWorkflowClosed) {
			return work.CancelReceipt{}, err
		}
		if rec, err = e.lookup(ctx, o, id); err != nil {
			return work.CancelReceipt{}, err
		}
		// A run that closed while the Work is live continued as new (a
		// waiting job): the next try reaches the next run.
		if rec.State.Terminal() || try == closedTries {
			return work.CancelReceipt{WorkID: id, State: rec.State, AcceptedAt: time.Now()}, nil
		}
	}
	return work.CancelReceipt{WorkID: id, Accepted: r.Accepted, State: r.State, AcceptedAt: r.At}, nil
}

// Detach hides a Work from o without cancelling it.
func (e *Engine) Detach(ctx context.Context, o work.Owner, id string) (work.DetachReceipt, error) {
	rec, err := e.lookup(ctx, o, id)
	if err != nil {
		return work.DetachReceipt{}, err
	}
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	if !rec.State.Terminal() {
		err = e.update(ctx, id, updateDetach, nil, o.ID())
		if err == nil {
			return work.DetachReceipt{ID: id}, nil
		}
		if !errors.Is(err, errWorkflowClosed) {
			return work.DetachReceipt{}, err
		}
	}
	// A finished Work: its owner forgets it. Its workflow has closed (or
	// is closing), so the detach is reported here, as in-process.
	if err := tellOwner(ctx, e.c, ownerWorkflowID(o.ID()), updateDetached, id); err != nil {
		return work.DetachReceipt{}, fromTemporal(err)
	}
	e.cfg.observer.Event(ctx, work.Event{Type: work.EventDetached, WorkID: id,
		Owner: o.ID(), Depth: o.Depth(), Target: rec.Label, Kind: rec.Kind, Time: time.Now()})
	return work.DetachReceipt{ID: id}, nil
}

// Send queues guidance for a running agent child, as work.Supervisor.Send;
// the child takes it at its next model boundary. The text is the input of
// a holder workflow of its own (agentwork.Guidance), never in the Work's
// history; the holder deletes its execution, history included, once the
// child has taken the text, the Work ended without taking it, or the
// message was refused or is a repeated command, and at the latest a week
// and the maximum duration after it was sent (a safety net). Configure a
// payload codec on the client to encrypt it meanwhile.
func (e *Engine) Send(ctx context.Context, o work.Owner, id, commandID, message string) (work.SendReceipt, error) {
	return e.send(ctx, o, id, commandID, message, true)
}

// send is Send, and Answer when agentOnly is false (a function child
// reads its guidance from work.AwaitAnswer; engine_updates.go).
func (e *Engine) send(ctx context.Context, o work.Owner, id, commandID, message string, agentOnly bool) (work.SendReceipt, error) {
	if err := work.ValidateOwner(o); err != nil {
		return work.SendReceipt{}, err
	}
	if err := durable.CheckMessage(message); err != nil {
		return work.SendReceipt{}, err
	}
	rec, err := e.lookup(ctx, o, id)
	if err != nil {
		return work.SendReceipt{}, err
	}
	if agentOnly && rec.Kind != work.KindAgent {
		return work.SendReceipt{}, work.ErrNotAgent
	}
	req := sendRequest{Owner: o.ID(), Bytes: len(message), Answer: !agentOnly,
		Digest: durable.Digest(message), Command: durable.Digest(commandID)}
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	var r sendReply
	if !rec.State.Terminal() {
		// The holder first: once the Work has the reference, the text must
		// exist. A holder the Work did not keep is told it is done.
		req.Ref = guidanceWorkflowID(id)
		ttl := guidanceTTL + e.cfg.limits.MaxDuration
		_, err = e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: req.Ref, TaskQueue: e.cfg.taskQueue},
			GuidanceWorkflowName, guidanceInput{Text: message, TTL: ttl})
		if err != nil {
			return work.SendReceipt{}, fromTemporal(err)
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
			return work.SendReceipt{}, work.ErrTerminal
		}
		v, qerr := e.c.QueryWorkflow(ctx, id, "", queryCommand, req.Command)
		if qerr != nil {
			return work.SendReceipt{}, fromTemporal(qerr)
		}
		var c commandRecord
		if qerr := v.Get(&c); qerr != nil {
			return work.SendReceipt{}, qerr
		}
		switch {
		case c.Digest == "":
			return work.SendReceipt{}, work.ErrTerminal
		case c.Digest != req.Digest:
			return work.SendReceipt{}, work.ErrConflict
		}
		r, err = c.Reply, nil
	}
	if err != nil {
		return work.SendReceipt{}, err
	}
	cursor := strconv.Itoa(r.Cursor)
	return work.SendReceipt{WorkID: id, ID: id + "." + cursor, Cursor: cursor, AcceptedAt: r.At}, nil
}

// Release detaches all of o's visible Work, cancels the unfinished part
// and forgets o (its starts included). Its error is the registry update's;
// an owner with no registry (nothing started) is released with no error.
func (e *Engine) Release(ctx context.Context, o work.Owner) error {
	if o.IsZero() {
		return nil
	}
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	err := e.update(ctx, ownerWorkflowID(o.ID()), updateRelease, nil)
	if errors.Is(err, work.ErrNotFound) {
		err = nil // no registry: nothing of o's to release
	}
	_ = e.local.Release(ctx, o) // in memory, made by work.New: it does not fail
	return err
}

// SetPool gives the top-level owner o a pool, as work.Supervisor.SetPool:
// each Work o starts reserves its budget from it at admission, in o's
// registry (so the pool holds across every coordinator process), and is
// refunded what it did not spend when it settles. A Work whose attempt
// died with its worker is charged its whole reservation (its usage is
// unknown). Work started by a child (a deeper scope) does not reserve from
// it. Release forgets the pool. A negative Budget field is
// work.ErrInvalidBudget (work.Budget.Validate), as is an invalid budget
// option (WithDefaultBudget, WithBudgetCeiling) for every SetPool, Start
// and Call.
func (e *Engine) SetPool(ctx context.Context, o work.Owner, b work.Budget) error {
	if e.cfg.err != nil {
		return e.cfg.err
	}
	if err := b.Validate(); err != nil {
		return err
	}
	if err := work.ValidateOwner(o); err != nil {
		return err
	}
	if o.Depth() > 0 {
		return work.PoolScopeRefusal()
	}
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	return fromTemporal(e.updateOwner(ctx, o, updatePool, nil, b.Dims()))
}
