package temporal

import (
	"context"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// JobDeadlineChange is the version marker of the one job deadline rule.
const JobDeadlineChange = jobDeadlineChange

// CancelClosed sends the cancel update of an Engine made with c and opts
// straight to Work id's workflow, skipping the owner registry's terminal
// check: a test of an update that reaches a workflow that closed after
// the registry was read.
func CancelClosed(c client.Client, opts []Option, o work.Owner, id string) error {
	e := newEngine(c, opts...)
	defer e.Close(context.Background())
	ctx, cancel := e.rpc(context.Background())
	defer cancel()
	var r driver.CancelReply
	return e.update(ctx, id, updateCancel, &r, o.ID())
}

// ErrWorkflowClosed is errWorkflowClosed, for the tests.
var ErrWorkflowClosed = errWorkflowClosed

// ReplayWork replays a Work workflow's history as a Worker whose Observer
// is obs would after losing it from its cache.
func ReplayWork(h *historypb.History, obs observe.Observer) error {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workWorkflow(obs, converter.GetDefaultDataConverter()), workflow.RegisterOptions{Name: WorkWorkflowName})
	return r.ReplayWorkflowHistory(nil, h)
}

// TellOwnerName is the local activity a Work's workflow updates its
// owner's registry with.
const TellOwnerName = tellOwnerName

// RecordState is the state a transition update's record carries ("" for
// anything else).
func RecordState(arg any) observe.State {
	if r, ok := arg.(ownerRecord); ok {
		return r.State
	}
	return ""
}

// SetMaxOwnerHistory sets the history length at which an owner's registry
// continues as new, and returns a function that restores it.
func SetMaxOwnerHistory(n int) (restore func()) {
	old := maxOwnerHistory
	maxOwnerHistory = n
	return func() { maxOwnerHistory = old }
}

// ReplayOwner replays an owner registry's history as a Worker would after
// losing it from its cache.
func ReplayOwner(h *historypb.History) error {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(ownerWorkflow, workflow.RegisterOptions{Name: OwnerWorkflowName})
	return r.ReplayWorkflowHistory(nil, h)
}

// RejoinActivityNameForTest is the Rejoin activity's name.
const RejoinActivityNameForTest = rejoinActivityName
