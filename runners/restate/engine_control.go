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
	e := (*engine)(s)
	var r driver.CancelReply
	if err := e.in.object(ctx, controlService, id, hCancel, "", o.ID(), &r); err != nil {
		return work.CancelReceipt{}, fromIngress(ctx, err)
	}
	if r.State == "not_found" {
		return work.CancelReceipt{}, work.ErrNotFound
	}
	return r.Receipt(id), nil
}

// SetPool keeps o's pool in its registry object: each Work o starts
// reserves its budget from it at admission and is refunded what it did
// not spend when it settles; a Work whose attempt was lost is charged its
// whole reservation.
func (s *store) SetPool(ctx context.Context, o work.Owner, b work.Budget) error {
	return fromIngress(ctx, (*engine)(s).in.object(ctx, ownerService, o.ID(), hPool, "", driver.BudgetDims(b), nil))
}
