package temporal

import (
	"context"
	"errors"
	"time"

	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/converter"

	"github.com/agentwork/agentwork/internal/durable"
	"github.com/agentwork/agentwork/work"
)

// lookup finds a Work visible to o in o's registry: the registry decides
// visibility (owner, detach, retention) and holds the state.
func (e *Engine) lookup(ctx context.Context, o work.Owner, id string) (ownerRecord, error) {
	if err := work.ValidateOwner(o); err != nil {
		return ownerRecord{}, err
	}
	if !work.IsID(id) {
		return ownerRecord{}, work.ErrNotFound
	}
	recs, err := e.records(ctx, o)
	if err != nil {
		return ownerRecord{}, err
	}
	return durable.Find(recs, id)
}

// Status returns the projection of one Work visible to o.
func (e *Engine) Status(ctx context.Context, o work.Owner, id string) (work.Status, error) {
	r, err := e.lookup(ctx, o, id)
	if err != nil {
		return work.Status{}, err
	}
	st := r.Status()
	if r.State == work.StateRunning || r.State == work.StateCancelRequested {
		st.Progress = e.progress(ctx, id)
	}
	return st, nil
}

// progress reads a running Work's progress counts from its attempt's last
// heartbeat (zero when there is none yet, or when the heartbeat's payload
// does not decode with the default data converter, as under a codec).
func (e *Engine) progress(ctx context.Context, id string) work.Progress {
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	d, err := e.c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return work.Progress{}
	}
	return heartbeatProgress(d.GetPendingActivities())
}

// heartbeatProgress decodes the progress counts of the last heartbeat of
// a Work's pending attempt (zero for none, or one that does not decode).
func heartbeatProgress(pending []*workflowpb.PendingActivityInfo) work.Progress {
	for _, a := range pending {
		if det := a.GetHeartbeatDetails(); det != nil && len(det.GetPayloads()) > 0 {
			var p work.Progress
			if converter.GetDefaultDataConverter().FromPayloads(det, &p) == nil {
				return p
			}
		}
	}
	return work.Progress{}
}

// records reads the records visible to o in its registry (nil when o has
// none): those past the age bound (WithRetention) by the Engine's clock
// are hidden, whether or not the registry has evicted them yet (it does
// at its next update, see ownerRun.expire).
func (e *Engine) records(ctx context.Context, o work.Owner) ([]ownerRecord, error) {
	recs, err := e.registry(ctx, o)
	if err != nil || e.cfg.limits.RetainAge <= 0 {
		return recs, err
	}
	return durable.Current(recs, e.Now(), e.cfg.limits.RetainAge), nil
}

// registry reads o's registry (nil when o has none), with no age applied,
// retrying a transient failure up to queryTries times while ctx is not
// done.
func (e *Engine) registry(ctx context.Context, o work.Owner) ([]ownerRecord, error) {
	if err := work.ValidateOwner(o); err != nil {
		return nil, err
	}
	// The registry answers through a worker: a query that reached a worker
	// that died (its sticky queue) fails or times out, the next one goes to
	// a live worker.
	var v converter.EncodedValue
	var err error
	for try := 1; ; try++ {
		qctx, cancel := e.rpc(ctx)
		v, err = e.c.QueryWorkflow(qctx, ownerWorkflowID(o.ID()), "", queryRecords)
		cancel()
		if err == nil || try == queryTries || !transient(err) || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		if errors.Is(fromTemporal(err), work.ErrNotFound) {
			return nil, nil
		}
		return nil, fromTemporal(err)
	}
	var recs []ownerRecord
	if err := v.Get(&recs); err != nil {
		return nil, err
	}
	return recs, nil
}

// queryTries bounds the tries of a registry query.
const queryTries = 3

// List returns at most work.MaxListed Works visible to o, unfinished first,
// then finished, newest first within each group.
func (e *Engine) List(ctx context.Context, o work.Owner) ([]work.Status, error) {
	recs, err := e.records(ctx, o)
	if err != nil {
		return nil, err
	}
	return durable.List(recs), nil
}

// Rows returns the status-block rows of o, as work.Supervisor.Rows, or the
// error of reading o's registry.
func (e *Engine) Rows(ctx context.Context, o work.Owner) ([]work.Row, int, error) {
	if o.IsZero() {
		return nil, 0, nil
	}
	recs, err := e.records(ctx, o)
	if err != nil {
		return nil, 0, err
	}
	rows, more := durable.Rows(recs, e.Now())
	return rows, more, nil
}

// Result returns the exact output of completed Work, else waits (up to the
// capped timeout, or ctx) for the Work to settle, as work.Supervisor.Result.
// The output is the Work workflow's result, read from Temporal: a result
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
	var res workOutcome
	if !r.State.Terminal() && timeout > 0 {
		wctx, wcancel := context.WithTimeout(ctx, timeout)
		err := e.c.GetWorkflow(wctx, id, "").Get(wctx, &res)
		wcancel()
		switch {
		case err == nil && res.Final != nil && res.Final.Detached:
			// Detached or released while awaited, before it ended: its
			// owner no longer sees it (as in-process).
			return work.Status{}, "", work.ErrNotFound
		case err == nil && res.Final != nil:
			// The Work ended while awaited: its outcome says what the
			// registry now holds.
			r.Take(*res.Final)
		default:
			// The wait ended (timeout, or ctx: Result then returns the
			// Status with no error, as in-process): read the registry
			// again, whatever the caller's ctx.
			res = workOutcome{}
			if r, err = e.lookup(context.WithoutCancel(ctx), o, id); err != nil {
				return work.Status{}, "", err
			}
		}
	}
	if r.State != work.StateCompleted || !r.HasResult {
		return r.Status(), "", nil
	}
	gctx, gcancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.rpcTimeout)
	defer gcancel()
	if res.Final == nil {
		if err := e.c.GetWorkflow(gctx, id, "").Get(gctx, &res); err != nil {
			return work.Status{}, "", fromTemporal(err)
		}
	}
	if !r.Read {
		// For the status block's priority: the result has been read.
		_ = tellOwner(gctx, e.c, ownerWorkflowID(o.ID()), updateRead, id)
		e.cfg.observer.Event(ctx, work.Event{Type: work.EventResultRead, WorkID: id,
			Owner: o.ID(), Depth: o.Depth(), Target: r.Label, Kind: r.Kind, Time: time.Now(), Bytes: len(res.Output)})
	}
	return r.Status(), res.Output, nil
}

// Settled returns every terminal Work visible to o, oldest settlement
// first, as work.Supervisor.Settled.
func (e *Engine) Settled(ctx context.Context, o work.Owner) ([]work.Status, error) {
	recs, err := e.records(ctx, o)
	if err != nil {
		return nil, err
	}
	return durable.Settled(recs), nil
}

// Live reports whether o has visible Work that is not terminal, or the
// error of reading o's registry.
func (e *Engine) Live(ctx context.Context, o work.Owner) (bool, error) {
	recs, err := e.records(ctx, o)
	if err != nil {
		return false, err
	}
	return durable.Live(recs), nil
}
