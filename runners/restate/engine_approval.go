package restate

import (
	"context"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// ApprovalIndex reads the namespace's approvals index (work.Approver()'s
// Pending).
func (s *store) ApprovalIndex(ctx context.Context) ([]approvalEntry, error) {
	e := (*engine)(s)
	var l []approvalEntry
	if err := e.in.object(ctx, approvalsService, approvalsKey, hList, "", nil, &l); err != nil {
		return nil, fromIngress(ctx, err)
	}
	return l, nil
}

// Approval reads a Work's pending request from its control object, with
// the child's input.
func (s *store) Approval(ctx context.Context, o work.Owner, id string) (approvalInfo, error) {
	e := (*engine)(s)
	var info approvalInfo
	if err := e.in.object(ctx, controlService, id, hRequest, "", driver.AnswerRequest{Owner: o.ID(), Approver: o.IsApprover()}, &info); err != nil {
		return approvalInfo{}, fromIngress(ctx, err)
	}
	in, err := e.cfg.ring.openString(id, fieldInput, info.Input)
	if err != nil {
		return approvalInfo{}, unreadable(err)
	}
	info.Input = in
	return info, nil
}

// AnswerApproval answers a Work's approval in its control object, which
// checks the owner.
func (s *store) AnswerApproval(ctx context.Context, o work.Owner, id string, approve bool) error {
	e := (*engine)(s)
	var ok bool
	if err := e.in.object(ctx, controlService, id, hAnswer, "", driver.AnswerRequest{Owner: o.ID(), Approver: o.IsApprover(), Approve: approve}, &ok); err != nil {
		return fromIngress(ctx, err)
	}
	if !ok {
		return work.ErrNotFound
	}
	return nil
}
