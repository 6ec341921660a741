package temporal

import (
	"context"
	"slices"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"
)

// approvalsWorkflow is the approvals index of one task queue (its id is
// "agentwork-approvals/<task queue>"): the Work of every owner that
// awaits approval, oldest request first, for the approver role
// (work.Approver). Each such Work adds itself when it starts waiting and
// removes itself when the wait ends, from a local activity; the index
// holds ids, owners and times only. It continues as new as its history
// grows. Work that needs no approval never touches it. Each entry carries
// its Work's target label (an entry an older version added has none; the
// Engine's Snapshot then takes the label from the Work's memo).
func approvalsWorkflow(ctx workflow.Context, st approvalsState) error {
	dirty := false
	if err := workflow.SetQueryHandler(ctx, queryApprovals, func() ([]approvalEntry, error) {
		return slices.Clone(st.Entries), nil
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, updateApprovalAdd, func(ctx workflow.Context, e approvalEntry) error {
		if !slices.ContainsFunc(st.Entries, func(x approvalEntry) bool { return x.ID == e.ID }) {
			st.Entries = append(st.Entries, e)
			slices.SortStableFunc(st.Entries, func(a, b approvalEntry) int { return a.Requested.Compare(b.Requested) })
		}
		dirty = true
		return nil
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, updateApprovalRemove, func(ctx workflow.Context, e approvalEntry) error {
		st.Entries = slices.DeleteFunc(st.Entries, func(x approvalEntry) bool { return x.ID == e.ID })
		dirty = true
		return nil
	}); err != nil {
		return err
	}
	for {
		_ = workflow.Await(ctx, func() bool { return dirty })
		dirty = false
		info := workflow.GetInfo(ctx)
		if info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() > maxOwnerHistory {
			_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
			return workflow.NewContinueAsNewError(ctx, ApprovalsWorkflowName, st)
		}
	}
}

const tellApprovalsName = "agentwork.TellApprovals"

// tellApprovalsActivity sends update name with e to the approvals index
// of task queue queue, starting the index if it is not running (update
// with start), and waits until the index has applied it.
func tellApprovalsActivity(c client.Client) func(ctx context.Context, queue, name string, e approvalEntry) error {
	return func(ctx context.Context, queue, name string, e approvalEntry) error {
		return updateWithStart(ctx, c, approvalsWorkflowID(queue), queue, ApprovalsWorkflowName, approvalsState{}, "", name, nil, e)
	}
}
