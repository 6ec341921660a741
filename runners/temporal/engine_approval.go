package temporal

import (
	"context"
	"errors"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// waitInput sets what an external job's Work needs in its workflow's
// input: the coordinator's job declaration (Spec.Job: its Backoff and
// MaxPollErrors with their defaults, the target's poll queue and the
// polls per run).
func (e *engine) waitInput(spec work.Spec, in *workInput) {
	if j := spec.Job; j != nil {
		r := driver.ResolveJob(*j)
		in.Job = &jobInput{Backoff: r.Backoff, MaxPollErrors: r.MaxPollErrors,
			PollQueue: pollQueue(e.cfg.taskQueue, spec.Target.Label), PollsPerRun: e.cfg.pollsPerRun}
	}
}

// Approval reads Work id's pending request from its workflow (a query:
// its input, the request's times); a closed workflow is work.ErrNotFound.
func (s *store) Approval(ctx context.Context, o work.Owner, id string) (approvalInfo, error) {
	var info approvalInfo
	err := (*engine)(s).queryWork(ctx, id, queryApproval, &info, driver.AnswerRequest{Owner: o.ID(), Approver: o.IsApprover()})
	return info, err
}

// AnswerApproval sends the approve or deny update to Work id's workflow,
// which checks the owner (o, or work.Approver() for any). It works from
// any coordinator process: the pending approval is workflow state.
func (s *store) AnswerApproval(ctx context.Context, o work.Owner, id string, approve bool) error {
	e := (*engine)(s)
	name := updateDeny
	if approve {
		name = updateApprove
	}
	err := e.update(ctx, id, name, nil, driver.AnswerRequest{Owner: o.ID(), Approver: o.IsApprover()})
	if errors.Is(err, errWorkflowClosed) {
		return work.ErrNotFound
	}
	return err
}

// ApprovalIndex reads the approvals index of the Engine's task queue
// (every owner's requests).
func (s *store) ApprovalIndex(ctx context.Context) ([]approvalEntry, error) {
	return (*engine)(s).approvalIndex(ctx)
}

// approvalIndex reads the approvals index of the Engine's task queue
// (none: no Work ever awaited approval there).
func (e *engine) approvalIndex(ctx context.Context) ([]approvalEntry, error) {
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
		return nil, undecodable(err)
	}
	return entries, nil
}
