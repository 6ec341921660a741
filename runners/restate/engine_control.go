package restate

import (
	"context"
	"strconv"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// Cancel asks for a Work to stop, as work.Supervisor.Cancel. A running
// child learns it at its next model boundary or poll (WithPollInterval).
func (e *Engine) Cancel(ctx context.Context, o work.Owner, id string) (work.CancelReceipt, error) {
	rec, err := e.Lookup(ctx, o, id)
	if err != nil {
		return work.CancelReceipt{}, err
	}
	if rec.State.Terminal() {
		return work.CancelReceipt{WorkID: id, State: rec.State, AcceptedAt: time.Now()}, nil
	}
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	var r cancelReply
	if err := e.in.object(ctx, controlService, id, hCancel, "", o.ID(), &r); err != nil {
		return work.CancelReceipt{}, fromIngress(ctx, err)
	}
	if r.State == "not_found" {
		return work.CancelReceipt{}, work.ErrNotFound
	}
	return work.CancelReceipt{WorkID: id, Accepted: r.Accepted, State: r.State, AcceptedAt: r.At}, nil
}

// Detach hides a Work from o without cancelling it.
func (e *Engine) Detach(ctx context.Context, o work.Owner, id string) (work.DetachReceipt, error) {
	rec, err := e.Lookup(ctx, o, id)
	if err != nil {
		return work.DetachReceipt{}, err
	}
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	if !rec.State.Terminal() {
		var ok bool
		if err := e.in.object(ctx, controlService, id, hDetach, "", o.ID(), &ok); err != nil {
			return work.DetachReceipt{}, fromIngress(ctx, err)
		}
		if ok {
			return work.DetachReceipt{ID: id}, nil
		}
	}
	// A finished Work: its owner forgets it, and the detach is reported
	// here, as in-process.
	if err := e.in.object(ctx, ownerService, o.ID(), hDetached, "", id, nil); err != nil {
		return work.DetachReceipt{}, fromIngress(ctx, err)
	}
	e.cfg.observer.Event(ctx, work.Event{Type: work.EventDetached, WorkID: id, Owner: o.ID(), Depth: o.Depth(),
		Target: rec.Label, Kind: rec.Kind, Time: time.Now()})
	return work.DetachReceipt{ID: id}, nil
}

// Send queues guidance for a running agent child, as work.Supervisor.Send;
// the child takes it at its next model boundary. The text is state of the
// Work's control object until then (or until the Work ends).
func (e *Engine) Send(ctx context.Context, o work.Owner, id, commandID, message string) (work.SendReceipt, error) {
	return e.send(ctx, o, id, commandID, message, false)
}

// send is Send, and Answer with answer set (a function child's guidance
// too).
func (e *Engine) send(ctx context.Context, o work.Owner, id, commandID, message string, answer bool) (work.SendReceipt, error) {
	if err := work.ValidateOwner(o); err != nil {
		return work.SendReceipt{}, err
	}
	if err := driver.CheckMessage(message); err != nil {
		return work.SendReceipt{}, err
	}
	if _, err := e.Lookup(ctx, o, id); err != nil {
		return work.SendReceipt{}, err
	}
	req := sendRequest{Owner: o.ID(), Digest: driver.Digest(message), Command: driver.Digest(commandID), Text: message, Answer: answer}
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	var r sendReply
	if err := e.in.object(ctx, controlService, id, hSend, "", req, &r); err != nil {
		return work.SendReceipt{}, fromIngress(ctx, err)
	}
	if err := decodeErr(r.Error, ""); err != nil {
		return work.SendReceipt{}, err
	}
	cursor := strconv.Itoa(r.Cursor)
	return work.SendReceipt{WorkID: id, ID: id + "." + cursor, Cursor: cursor, AcceptedAt: r.At}, nil
}

// Release detaches all of o's visible Work, cancels the unfinished part
// and forgets o (its starts and pool included).
func (e *Engine) Release(ctx context.Context, o work.Owner) error {
	if o.IsZero() {
		return nil
	}
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	if err := e.in.object(ctx, ownerService, o.ID(), hRelease, "", nil, nil); err != nil {
		return fromIngress(ctx, err)
	}
	return e.local.Release(ctx, o)
}

// SetPool gives the top-level owner o a pool, as work.Supervisor.SetPool,
// kept by o's registry (so it holds across every coordinator process):
// each Work o starts reserves its budget from it at admission and is
// refunded what it did not spend when it settles; a Work whose attempt
// was lost is charged its whole reservation.
func (e *Engine) SetPool(ctx context.Context, o work.Owner, b work.Budget) error {
	if err := e.admissible(); err != nil && err != work.ErrClosed {
		return err
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
	return fromIngress(ctx, e.in.object(ctx, ownerService, o.ID(), hPool, "", b.Dims(), nil))
}
