package restate

import (
	"context"
	"time"

	"github.com/agentwork/agentwork/internal/durable"
	"github.com/agentwork/agentwork/work"
)

// registry reads o's visible records (nil when o has none), those past
// the age bound (WithRetention) left out.
func (e *Engine) registry(ctx context.Context, o work.Owner) ([]ownerRecord, error) {
	if err := work.ValidateOwner(o); err != nil {
		return nil, err
	}
	if e.cfg.ingress == "" {
		return nil, work.ErrUnavailable.Detail("no ingress (WithIngress)")
	}
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	var recs []ownerRecord
	if err := e.in.object(ctx, ownerService, o.ID(), hRecords, "", nil, &recs); err != nil {
		return nil, fromIngress(ctx, err)
	}
	// Past the age bound by this Engine's clock: hidden before the
	// registry's next admission evicts them (WithRetention).
	return durable.Current(recs, e.Now(), e.cfg.limits.RetainAge), nil
}

// lookup finds a Work visible to o in o's registry.
func (e *Engine) lookup(ctx context.Context, o work.Owner, id string) (ownerRecord, error) {
	if err := work.ValidateOwner(o); err != nil {
		return ownerRecord{}, err
	}
	if !work.IsID(id) {
		return ownerRecord{}, work.ErrNotFound
	}
	recs, err := e.registry(ctx, o)
	if err != nil {
		return ownerRecord{}, err
	}
	return durable.Find(recs, id)
}

// Status returns the projection of one Work visible to o; a running
// Work's progress counts are read from its control object (one more call).
func (e *Engine) Status(ctx context.Context, o work.Owner, id string) (work.Status, error) {
	r, err := e.lookup(ctx, o, id)
	if err != nil {
		return work.Status{}, err
	}
	st := r.Status()
	if r.State == work.StateRunning || r.State == work.StateCancelRequested {
		st.Progress = e.progress(ctx, id, st.Progress)
	}
	return st, nil
}

// progress reads a running Work's last progress counts from its control
// object (its attempt sends them there when they change, see
// Worker.watch); on a failed read, or none yet, it returns known.
func (e *Engine) progress(ctx context.Context, id string, known work.Progress) work.Progress {
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	var v controlView
	if e.in.object(ctx, controlService, id, hPeek, "", nil, &v) != nil || v.Progress == (work.Progress{}) {
		return known
	}
	return v.Progress
}

// List returns at most work.MaxListed Works visible to o in the
// contract's order (work.Order.ListsBefore).
func (e *Engine) List(ctx context.Context, o work.Owner) ([]work.Status, error) {
	recs, err := e.registry(ctx, o)
	if err != nil {
		return nil, err
	}
	return durable.List(recs), nil
}

// Rows returns the status-block rows of o (work.Order.RowsBefore), or the
// error of reading o's registry.
func (e *Engine) Rows(ctx context.Context, o work.Owner) ([]work.Row, int, error) {
	if o.IsZero() {
		return nil, 0, nil
	}
	recs, err := e.registry(ctx, o)
	if err != nil {
		return nil, 0, err
	}
	rows, more := durable.Rows(recs, e.Now())
	return rows, more, nil
}

// Result returns the exact output of completed Work, else waits (up to
// the capped timeout, or ctx) for the Work to settle, reading its
// registry with a backoff (10 ms doubling to 200 ms). The output is kept
// by the Work's control object while the registry keeps its record: one
// that completed while this process was down is read the same way.
func (e *Engine) Result(ctx context.Context, o work.Owner, id string, timeout time.Duration) (work.Status, string, error) {
	if timeout < 0 {
		return work.Status{}, "", work.ErrInvalidTimeout
	}
	timeout = min(timeout, work.MaxResultWait)
	r, err := e.lookup(ctx, o, id)
	if err != nil {
		return work.Status{}, "", err
	}
	if !r.State.Terminal() && timeout > 0 {
		deadline := time.NewTimer(timeout)
		defer deadline.Stop()
	wait:
		for d := 10 * time.Millisecond; !r.State.Terminal(); d = min(2*d, 200*time.Millisecond) {
			select {
			case <-ctx.Done():
				break wait
			case <-deadline.C:
				break wait
			case <-time.After(d):
			}
			if r, err = e.lookup(context.WithoutCancel(ctx), o, id); err != nil {
				return work.Status{}, "", err
			}
		}
	}
	if r.State != work.StateCompleted || !r.HasResult {
		return r.Status(), "", nil
	}
	gctx, cancel := e.rpc(context.WithoutCancel(ctx))
	defer cancel()
	var rep outputReply
	if err := e.in.object(gctx, controlService, id, hOutput, "", o.ID(), &rep); err != nil {
		return work.Status{}, "", fromIngress(gctx, err)
	}
	if !rep.Found {
		return work.Status{}, "", work.ErrNotFound // detached or released meanwhile
	}
	out := rep.Output
	if !r.Read {
		// For the status block's priority: the result has been read.
		_ = e.in.object(gctx, ownerService, o.ID(), hRead, "", id, nil)
		e.cfg.observer.Event(ctx, work.Event{Type: work.EventResultRead, WorkID: id, Owner: o.ID(), Depth: o.Depth(),
			Target: r.Label, Kind: r.Kind, Time: time.Now(), Bytes: len(out)})
		r.Read = true
	}
	return r.Status(), out, nil
}

// Settled returns every terminal Work visible to o, oldest settlement
// first.
func (e *Engine) Settled(ctx context.Context, o work.Owner) ([]work.Status, error) {
	recs, err := e.registry(ctx, o)
	if err != nil {
		return nil, err
	}
	return durable.Settled(recs), nil
}

// Live reports whether o has visible Work that is not terminal.
func (e *Engine) Live(ctx context.Context, o work.Owner) (bool, error) {
	recs, err := e.registry(ctx, o)
	if err != nil {
		return false, err
	}
	return durable.Live(recs), nil
}
