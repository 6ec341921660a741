package restate

import (
	"context"
	"sort"

	"github.com/agentwork/agentwork/internal/durable"
	"github.com/agentwork/agentwork/work"
)

var _ work.Approvals = (*Engine)(nil)

// maxPending bounds what Pending returns for work.Approver(): the oldest
// requests of the namespace.
const maxPending = 100

// Pending returns the Work visible to o that awaits approval, oldest
// request first, with each child's input (work.Approvals): o's registry,
// then each such Work's control object; for work.Approver() the
// namespace's approvals index instead (at most the 100 oldest).
func (e *Engine) Pending(ctx context.Context, o work.Owner) ([]work.ApprovalRequest, error) {
	if !o.IsApprover() {
		if err := work.ValidateOwner(o); err != nil {
			return nil, err
		}
	}
	var ids []string
	if o.IsApprover() {
		var l []approvalEntry
		lctx, cancel := e.rpc(ctx)
		err := e.in.object(lctx, approvalsService, approvalsKey, hList, "", nil, &l)
		cancel()
		if err != nil {
			return nil, fromIngress(ctx, err)
		}
		sort.SliceStable(l, func(i, j int) bool { return l[i].Requested.Before(l[j].Requested) })
		for _, x := range l[:min(len(l), maxPending)] {
			ids = append(ids, x.ID)
		}
	} else {
		recs, err := e.records(ctx, o)
		if err != nil {
			return nil, err
		}
		ids = durable.AwaitingApproval(recs)
	}
	out := []work.ApprovalRequest{}
	for _, id := range ids {
		var info approvalInfo
		rctx, cancel := e.rpc(ctx)
		err := e.in.object(rctx, controlService, id, hRequest, "", answerRequest{Owner: o.ID(), Approver: o.IsApprover()}, &info)
		cancel()
		if err != nil {
			return nil, fromIngress(ctx, err)
		}
		if info.Found {
			out = append(out, work.ApprovalRequest{Work: work.Ref{ID: id, TargetID: info.TargetID, Durable: true},
				TargetLabel: info.Label, Owner: info.Owner, Input: info.Input, RequestedAt: info.Requested, Deadline: info.Deadline})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].RequestedAt.Before(out[j].RequestedAt) })
	return out, nil
}

// Approve lets the Work join the dispatch queue (work.Approvals).
func (e *Engine) Approve(ctx context.Context, o work.Owner, id string) error {
	return e.answer(ctx, o, id, true)
}

// Deny cancels the Work, class denied (work.Approvals).
func (e *Engine) Deny(ctx context.Context, o work.Owner, id string) error {
	return e.answer(ctx, o, id, false)
}

func (e *Engine) answer(ctx context.Context, o work.Owner, id string, approve bool) error {
	if !o.IsApprover() {
		if err := work.ValidateOwner(o); err != nil {
			return err
		}
	}
	if !work.IsID(id) {
		return work.ErrNotFound
	}
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	var ok bool
	if err := e.in.object(ctx, controlService, id, hAnswer, "", answerRequest{Owner: o.ID(), Approver: o.IsApprover(), Approve: approve}, &ok); err != nil {
		return fromIngress(ctx, err)
	}
	if !ok {
		return work.ErrNotFound
	}
	return nil
}
