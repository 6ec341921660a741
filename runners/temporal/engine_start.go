package temporal

import (
	"context"
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// Start admits Work in the owner's registry (atomically, against its
// limits) and starts its workflow. The child runs later on a Worker that
// registered spec.Target.Label, from spec.Input (spec.Run is not used).
//
// Its two calls to Temporal (the admission in the owner's registry, then
// the start of the Work's workflow) are bounded by the RPC timeout but not
// by ctx: a call a cancelled client abandons may still take effect on the
// server, and Start could then neither report the Work (its caller was
// told it failed) nor forget it safely (a registry record without its
// workflow, or a running workflow its registry forgot). ctx's values
// reach the Observer's events. After Close it returns work.ErrClosed.
func (e *Engine) Start(ctx context.Context, spec work.Spec) (work.Ref, error) {
	if err := e.admissible(); err != nil {
		return work.Ref{}, err
	}
	if err := spec.Validate(); err != nil {
		return work.Ref{}, err
	}
	o := spec.Owner
	if err := driver.TooDeep(ctx, e.cfg.observer, spec, e.cfg.limits.MaxDepth); err != nil {
		return work.Ref{}, err
	}
	launch := newLaunchInfo(ctx)
	caller := ctx
	targetID := spec.Target.ID
	if targetID == "" {
		targetID = spec.Target.Label
	}
	id := driver.NewID()
	now := time.Now().UTC()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.rpcTimeout)
	defer cancel()
	ownerWF := ownerWorkflowID(o.ID())
	// The budget resolves as in-process (the local Supervisor has the same
	// defaults, ceiling and maximum duration); the owner's registry applies
	// its pool at admission.
	budget := e.local.EffectiveBudget(spec)
	var reply admitReply
	launchKey, launchDigest := driver.LaunchIdentity(spec)
	err := e.updateOwner(ctx, o, updateAdmit, &reply, admitRequest{Record: ownerRecord{ID: id, Label: spec.Target.Label,
		TargetID: targetID, Kind: spec.Target.Kind, Created: now}, MaxOutstanding: e.cfg.limits.MaxOutstanding,
		MaxStarts: e.cfg.limits.MaxStarts, Retain: e.cfg.limits.RetainTerminal, RetainAge: e.cfg.limits.RetainAge, Want: spec.Budget.Dims(), Eff: budget.Dims(),
		Function: spec.Target.Kind == work.KindFunction, Launch: launchKey, Digest: launchDigest,
		Approval: spec.NeedsApproval})
	if err != nil {
		if reason, short := refusalOf(err); reason != "" {
			driver.Refused(caller, e.cfg.observer, spec, reason, short)
		}
		return work.Ref{}, fromTemporal(err)
	}
	if reply.Replay {
		return work.Ref{ID: reply.ID, TargetID: reply.TargetID, Durable: true}, nil
	}
	budget.SetDims(reply.Budget)
	maxDur := budget.MaxDuration
	maxBytes := e.cfg.limits.ResultBytes(spec)
	attempts := 1
	if e.cfg.retryable[spec.Target.Label] {
		attempts = e.cfg.maxAttempts
	}
	in := workInput{ID: id, Owner: o.ID(), Depth: o.Depth(), Label: spec.Target.Label, TargetID: targetID,
		Kind: spec.Target.Kind, Input: spec.Input, TaskQueue: activityQueue(e.cfg.taskQueue, spec.Target.Label),
		OwnerWorkflow: ownerWF, MaxDuration: maxDur, MaxResultBytes: maxBytes, MaxAttempts: attempts,
		HeartbeatTimeout: e.cfg.heartbeatTimeout, Created: now,
		Mailbox: mailboxLimits{Messages: work.DefaultMaxQueuedGuidance, Bytes: work.DefaultMaxQueuedGuidanceBytes,
			Commands: work.DefaultMaxCommandRecords}, Launch: launch, Budget: budget, FailOnBudget: spec.FailOnBudget}
	e.waitInput(spec, &in)
	if spec.Updates != nil { // engine_updates.go
		p := spec.Updates.Resolved()
		in.Updates = &p
	}
	_, err = e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: e.cfg.taskQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(ownerKey.ValueSet(o.ID())),
		Memo:                  startMemo(spec, now),
	}, WorkWorkflowName, in)
	if err != nil {
		sctx, scancel := e.rpc(context.WithoutCancel(caller))
		defer scancel()
		_ = tellOwner(sctx, e.c, ownerWF, updateForget, id)
		return work.Ref{}, fromTemporal(err)
	}
	return work.Ref{ID: id, TargetID: targetID, Durable: true}, nil
}

// admissible checks what precedes every Start and Call, as the
// Supervisor: the Engine is not closed (work.ErrClosed) and its options
// are valid (the first invalid budget option's work.ErrInvalidBudget).
func (e *Engine) admissible() error {
	if e.life.Closed() {
		return work.ErrClosed
	}
	return e.cfg.err
}

func activityQueue(base, label string) string { return base + "." + label }

// updateOwner sends an update to o's registry, starting the registry if
// it is not running (update with start).
func (e *Engine) updateOwner(ctx context.Context, o work.Owner, name string, out any, arg any) error {
	ownerWF := ownerWorkflowID(o.ID())
	startOwner := e.c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID: ownerWF, TaskQueue: e.cfg.taskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	}, OwnerWorkflowName, ownerState{Owner: o.ID(), Registry: driver.Registry{Retain: e.cfg.limits.RetainTerminal, RetainAge: e.cfg.limits.RetainAge}})
	h, err := e.c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: startOwner,
		UpdateOptions: client.UpdateWorkflowOptions{WorkflowID: ownerWF, UpdateName: name,
			WaitForStage: client.WorkflowUpdateStageCompleted, Args: []any{arg}},
	})
	if err == nil {
		err = h.Get(ctx, out)
	}
	return err
}

// refusalOf returns why the owner's registry refused a start: a limit's
// name (work.LimitOutstanding, work.LimitStarts), or
// work.ClassBudgetExhausted with the budget its pool could not cover; ""
// for any other error.
func refusalOf(err error) (reason, budget string) {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || !app.HasDetails() {
		return "", ""
	}
	var detail string
	if app.Details(&detail) != nil {
		return "", ""
	}
	switch app.Type() {
	case errTypePrefix + work.ErrLimit.Code:
		return detail, ""
	case errTypePrefix + work.ErrBudgetExhausted.Code:
		return work.ClassBudgetExhausted, detail
	}
	return "", ""
}

// Call runs a foreground child in this process (see Engine).
func (e *Engine) Call(ctx context.Context, spec work.Spec) (string, error) {
	if err := e.admissible(); err != nil {
		return "", err
	}
	return e.local.Call(ctx, spec)
}
