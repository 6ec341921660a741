package main

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
)

// echoChild is the scale run's trivial function child: it returns its
// input.
var echoChild = temporal.Child{Kind: work.KindFunction, Run: func(_ context.Context, in string) (string, error) { return in, nil }}

// The bare Temporal baseline of the scale run: a workflow on
// "<queue>-bare" that runs one activity on "<queue>-bare.remote", a task
// queue of its own (the shape of a Work and its child's attempt).
const (
	bareWorkflowName = "bare.remote"
	bareActivityName = "bare.echo"
)

func bareQueue(queue string) string { return queue + "-bare" }

func bareWorkflow(ctx workflow.Context, in string) (string, error) {
	var out string
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue: workflow.GetInfo(ctx).TaskQueueName + ".remote", StartToCloseTimeout: time.Minute}), bareActivityName, in).Get(ctx, &out)
	return out, err
}

// startBare runs the baseline's workflow and activity workers on c (a
// worker given -bare); stop stops them.
func startBare(c client.Client, queue string) (stop func(), err error) {
	wf := worker.New(c, bareQueue(queue), worker.Options{})
	wf.RegisterWorkflowWithOptions(bareWorkflow, workflow.RegisterOptions{Name: bareWorkflowName})
	act := worker.New(c, bareQueue(queue)+".remote", worker.Options{})
	act.RegisterActivityWithOptions(func(_ context.Context, in string) (string, error) { return in, nil },
		activity.RegisterOptions{Name: bareActivityName})
	if err := wf.Start(); err != nil {
		return nil, err
	}
	if err := act.Start(); err != nil {
		wf.Stop()
		return nil, err
	}
	return func() { act.Stop(); wf.Stop() }, nil
}
