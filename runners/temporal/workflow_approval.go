package temporal

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// Approval in the Work workflow, as the package doc's "Work that waits"
// says: the owner's registry marks the Work from its admission on
// (ownerRecord.Approval), the approvals index (approvalsWorkflow) lists
// it meanwhile.

// waitHandlers registers the approve and deny updates and the approval
// query (on every Work: one that does not await approval answers
// work.ErrNotFound, or Found false).
func (w *workRun) waitHandlers(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, queryApproval, func(r driver.AnswerRequest) (approvalInfo, error) {
		if !w.AwaitsApprovalFor(w.in.Owner, r) {
			return approvalInfo{}, nil
		}
		return approvalInfo{Found: true, Owner: w.in.Owner, Label: w.in.Label, TargetID: w.in.TargetID,
			Input: w.in.Input, Requested: w.in.Created, Deadline: w.approvalDeadline()}, nil
	}); err != nil {
		return err
	}
	validate := func(r driver.AnswerRequest) error {
		if !w.AwaitsApprovalFor(w.in.Owner, r) {
			return workErr(work.ErrNotFound)
		}
		return nil
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, updateApprove, func(ctx workflow.Context, r driver.AnswerRequest) error {
		w.Approve(workflow.Now(ctx))
		w.ev.emit(ctx, observe.Event{Type: observe.EventApproved})
		w.notify(ctx)
		return nil
	}, workflow.UpdateHandlerOptions{Validator: validate}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, updateDeny, func(ctx workflow.Context, r driver.AnswerRequest) error {
		w.Awaiting = false
		w.ev.emit(ctx, observe.Event{Type: observe.EventDenied})
		w.endQueued(ctx, work.ClassDenied)
		return nil
	}, workflow.UpdateHandlerOptions{Validator: validate})
}

func (w *workRun) approvalDeadline() time.Time {
	return w.in.Created.Add(w.in.Approval.Timeout)
}

// awaitApproval holds the Work (its EventApprovalRequested reported as
// the workflow began) until it is approved, denied, cancelled or its
// approval timeout passes (then it ends cancelled,
// work.ClassApprovalTimeout). The approvals index lists it meanwhile.
func (w *workRun) awaitApproval(ctx workflow.Context) {
	w.tellApprovals(ctx, updateApprovalAdd, approvalEntry{ID: w.in.ID, Owner: w.in.Owner, Label: w.in.Label, Requested: w.in.Created})
	if wait := w.approvalDeadline().Sub(workflow.Now(ctx)); wait > 0 {
		_, _ = workflow.AwaitWithTimeout(ctx, wait, func() bool { return !w.AwaitsApproval() })
	}
	if w.AwaitsApproval() {
		w.Awaiting = false
		w.endQueued(ctx, work.ClassApprovalTimeout)
	}
	w.Awaiting = false
	w.tellApprovals(ctx, updateApprovalRemove, approvalEntry{ID: w.in.ID})
}

// endQueued ends a queued Work cancelled with class (denied, or its
// approval timed out).
func (w *workRun) endQueued(ctx workflow.Context, class string) {
	w.dropGuidance(ctx)
	ev, _ := w.Settle(work.StateCancelled, class, 0, w.in.Created, workflow.Now(ctx))
	w.ev.emit(ctx, ev)
	w.cancelAct()
	w.notify(ctx)
}

// tellApprovals sends update name to the approvals index of the Work's
// task queue (starting it if need be), from a local activity, as
// tellOwner does for the registry.
func (w *workRun) tellApprovals(ctx workflow.Context, name string, e approvalEntry) {
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		ScheduleToCloseTimeout: time.Hour,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumInterval: 10 * time.Second},
	})
	_ = workflow.ExecuteLocalActivity(lctx, tellApprovalsName, workflow.GetInfo(ctx).TaskQueueName, name, e).Get(ctx, nil)
}
