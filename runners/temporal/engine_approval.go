package temporal

import (
	"context"
	"errors"
	"slices"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

var _ work.Approvals = (*Engine)(nil)

// maxPending bounds the requests Pending returns (oldest first): the
// approver role reads them from the approvals index of the Engine's task
// queue, then each from its Work's workflow (one query each).
const maxPending = 100

// waitInput sets what a Work that waits needs in its workflow's input:
// the coordinator's job declaration (Spec.Job: its Backoff and
// MaxPollErrors with their defaults, the target's poll queue and the
// polls per run) and the approval timeout.
func (e *Engine) waitInput(spec work.Spec, in *workInput) {
	if j := spec.Job; j != nil {
		maxErrs := j.MaxPollErrors
		if maxErrs == 0 {
			maxErrs = work.DefaultMaxPollErrors
		}
		in.Job = &jobInput{Backoff: j.Backoff.Delays(), MaxPollErrors: maxErrs,
			PollQueue: pollQueue(e.cfg.taskQueue, spec.Target.Label), PollsPerRun: e.cfg.pollsPerRun}
	}
	if spec.NeedsApproval {
		t := spec.ApprovalTimeout
		if t == 0 {
			t = work.DefaultApprovalTimeout
		}
		in.Approval = &approvalInput{Timeout: t}
	}
}

// Pending returns the Work visible to o that awaits approval, oldest
// request first (work.Approvals). For an owner it reads the owner's
// registry, then each such Work's workflow (its input, the request's
// times); for work.Approver() it reads the approvals index of the
// Engine's task queue (every owner's requests), at most the 100 oldest.
func (e *Engine) Pending(ctx context.Context, o work.Owner) ([]work.ApprovalRequest, error) {
	if err := e.answerer(o); err != nil {
		return nil, err
	}
	var ids []string
	if o.IsApprover() {
		entries, err := e.approvalIndex(ctx)
		if err != nil {
			return nil, err
		}
		for _, x := range entries {
			ids = append(ids, x.ID)
		}
	} else {
		recs, err := e.Visible(ctx, o)
		if err != nil {
			return nil, err
		}
		ids = driver.AwaitingApproval(recs)
	}
	out := []work.ApprovalRequest{}
	req := answerRequest{Owner: o.ID(), Approver: o.IsApprover()}
	for _, id := range ids {
		if len(out) == maxPending {
			break
		}
		info, err := e.approval(ctx, id, req)
		if err != nil {
			if errors.Is(err, work.ErrNotFound) || errors.Is(err, errWorkflowClosed) {
				continue // answered, cancelled or ended meanwhile
			}
			return nil, err
		}
		if !info.Found {
			continue
		}
		out = append(out, work.ApprovalRequest{Work: work.Ref{ID: id, TargetID: info.TargetID, Durable: true},
			TargetLabel: info.Label, Owner: info.Owner, Input: info.Input, RequestedAt: info.Requested, Deadline: info.Deadline})
	}
	slices.SortStableFunc(out, func(a, b work.ApprovalRequest) int { return a.RequestedAt.Compare(b.RequestedAt) })
	return out, nil
}

// Approve lets Work id, awaiting approval, join the dispatch queue
// (work.Approvals): an update to its workflow, which checks the owner (o,
// or work.Approver() for any). A Work that is unknown, another owner's
// or not awaiting approval is work.ErrNotFound. It works from any
// coordinator process: the pending approval is workflow state.
func (e *Engine) Approve(ctx context.Context, o work.Owner, id string) error {
	return e.answer(ctx, o, id, updateApprove)
}

// Deny cancels Work id, awaiting approval, with class work.ClassDenied
// (work.Approvals), as Approve checks it.
func (e *Engine) Deny(ctx context.Context, o work.Owner, id string) error {
	return e.answer(ctx, o, id, updateDeny)
}

func (e *Engine) answer(ctx context.Context, o work.Owner, id, name string) error {
	if err := e.answerer(o); err != nil {
		return err
	}
	if !work.IsID(id) {
		return work.ErrNotFound
	}
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	err := e.update(ctx, id, name, nil, answerRequest{Owner: o.ID(), Approver: o.IsApprover()})
	if errors.Is(err, errWorkflowClosed) {
		return work.ErrNotFound
	}
	return err
}

// answerer checks who reads or answers approvals: an owner or the
// approver role.
func (e *Engine) answerer(o work.Owner) error {
	if o.IsApprover() {
		return nil
	}
	return work.ValidateOwner(o)
}

// approval reads Work id's pending approval from its workflow.
func (e *Engine) approval(ctx context.Context, id string, r answerRequest) (approvalInfo, error) {
	qctx, cancel := e.rpc(ctx)
	defer cancel()
	v, err := e.c.QueryWorkflow(qctx, id, "", queryApproval, r)
	if err != nil {
		return approvalInfo{}, fromTemporal(err)
	}
	var info approvalInfo
	if err := v.Get(&info); err != nil {
		return approvalInfo{}, err
	}
	return info, nil
}

// approvalIndex reads the approvals index of the Engine's task queue
// (none: no Work ever awaited approval there).
func (e *Engine) approvalIndex(ctx context.Context) ([]approvalEntry, error) {
	qctx, cancel := e.rpc(ctx)
	defer cancel()
	v, err := e.c.QueryWorkflow(qctx, approvalsWorkflowID(e.cfg.taskQueue), "", queryApprovals)
	if err != nil {
		if err = fromTemporal(err); errors.Is(err, work.ErrNotFound) {
			return nil, nil
		}
		return nil, err
	}
	var entries []approvalEntry
	if err := v.Get(&entries); err != nil {
		return nil, err
	}
	return entries, nil
}
