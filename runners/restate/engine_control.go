package restate

import (
	"context"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// CancelWork asks the Work's control object, whose answer is the
// cancel's decision. A running child learns it at its next model
// boundary or poll (WithPollInterval).
func (s *store) CancelWork(ctx context.Context, o work.Owner, id string) (work.CancelReceipt, error) {
	e := (*Engine)(s)
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

// SetPool gives the top-level owner o a pool, as work.Supervisor.SetPool,
// kept by o's registry (so it holds across every coordinator process):
// each Work o starts reserves its budget from it at admission and is
// refunded what it did not spend when it settles; a Work whose attempt
// was lost is charged its whole reservation.
func (e *Engine) SetPool(ctx context.Context, o work.Owner, b work.Budget) error {
	if err := (*store)(e).Admissible(); err != nil {
		return err
	}
	if err := driver.CheckPool(o, b); err != nil {
		return err
	}
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	return fromIngress(ctx, e.in.object(ctx, ownerService, o.ID(), hPool, "", b.Dims(), nil))
}
