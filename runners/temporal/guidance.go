package temporal

import (
	"context"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/agentwork/agentwork/work/driver"
)

// GuidanceWorkflowName is the workflow that holds one guidance message
// until its child takes it (its id is "agentwork-guidance/<work id>/<id>").
const GuidanceWorkflowName = "agentwork.Guidance"

const (
	queryText  = "text"
	signalDone = "done"

	// guidanceTTL (plus the maximum duration) bounds how long a message
	// waits for its child: then it deletes itself anyway (a safety net
	// for holders nobody tells they are done).
	guidanceTTL = 7 * 24 * time.Hour
)

// guidanceInput starts a guidance holder: the message and how long it may
// wait at most.
type guidanceInput struct {
	Text string
	TTL  time.Duration
}

func guidanceWorkflowID(workID string) string {
	return "agentwork-guidance/" + workID + "/" + driver.NewID()
}

// guidanceWorkflow holds one message: its text is its input, read by the
// child's worker through the "text" query at the child's boundary. When
// it is told it is done (delivered, dropped at the Work's end, refused or
// a duplicate) or its time is up, it deletes its own execution (history
// included), so that the text stays in Temporal only until it is
// delivered.
func guidanceWorkflow(ctx workflow.Context, in guidanceInput) error {
	if err := workflow.SetQueryHandler(ctx, queryText, func() (string, error) { return in.Text, nil }); err != nil {
		return err
	}
	done := workflow.GetSignalChannel(ctx, signalDone)
	timer := workflow.NewTimer(ctx, max(in.TTL, time.Minute))
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(done, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil) })
	sel.AddFuture(timer, func(workflow.Future) {})
	sel.Select(ctx)
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
	// The deletion ends this execution: the activity's result is never
	// recorded, and nothing follows it.
	return workflow.ExecuteLocalActivity(lctx, deleteSelfName).Get(ctx, nil)
}

const deleteSelfName = "agentwork.DeleteGuidance"

// deleteSelf deletes the execution of the workflow that runs it.
func deleteSelf(c client.Client) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		info := activity.GetInfo(ctx)
		_, err := c.WorkflowService().DeleteWorkflowExecution(ctx, &workflowservice.DeleteWorkflowExecutionRequest{
			Namespace: info.Namespace,
			WorkflowExecution: &commonpb.WorkflowExecution{
				WorkflowId: info.WorkflowExecution.ID, RunId: info.WorkflowExecution.RunID},
		})
		return err
	}
}
