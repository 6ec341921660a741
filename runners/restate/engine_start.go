package restate

import (
	"context"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// Start admits Work in the owner's registry, which records it and starts
// its workflow in one invocation; the child runs later on the Worker that
// registered spec.Target.Label, from spec.Input (spec.Run is not used).
// The admission is bounded by the RPC timeout, not by ctx (an abandoned
// call may still take effect, and Start could not then report the Work):
// it carries an idempotency key, so a call cut off is tried again without
// admitting twice. A Spec with NeedsApproval, Job or Updates runs as the
// package doc says. With WithAdmin, a target no Worker has registered is
// work.ErrInvalidSpec (checked once per label until it is registered).
func (e *Engine) Start(ctx context.Context, spec work.Spec) (work.Ref, error) {
	if err := e.admissible(); err != nil {
		return work.Ref{}, err
	}
	if err := spec.Validate(); err != nil {
		return work.Ref{}, err
	}
	o := spec.Owner
	if err := e.servedTarget(ctx, spec.Target.Label); err != nil {
		return work.Ref{}, err
	}
	if err := driver.TooDeep(ctx, e.cfg.observer, spec, e.cfg.limits.MaxDepth); err != nil {
		return work.Ref{}, err
	}
	targetID := spec.Target.ID
	if targetID == "" {
		targetID = spec.Target.Label
	}
	id := driver.NewID()
	now := time.Now().UTC()
	budget := e.local.EffectiveBudget(spec)
	maxBytes := e.cfg.limits.ResultBytes(spec)
	attempts := 1
	if e.cfg.retryable[spec.Target.Label] {
		attempts = e.cfg.maxAttempts
	}
	var approval *approvalInput
	if spec.NeedsApproval {
		approval = &approvalInput{Timeout: spec.ApprovalTimeout}
		if approval.Timeout <= 0 {
			approval.Timeout = work.DefaultApprovalTimeout
		}
	}
	var updates *work.UpdatePolicy
	if spec.Updates != nil {
		p := spec.Updates.Resolved()
		updates = &p
	}
	var job *jobInput
	if spec.Job != nil {
		// A submit whose worker died is tried again, with the Work's id as
		// its key (safe only when the service honours it).
		attempts = submitAttempts
		job = &jobInput{Backoff: spec.Job.Backoff, MaxPollErrors: spec.Job.MaxPollErrors}
	}
	in := workInput{ID: id, Owner: o.ID(), Depth: o.Depth(), Label: spec.Target.Label, TargetID: targetID,
		Kind: spec.Target.Kind, Input: spec.Input, MaxDuration: budget.MaxDuration, MaxResultBytes: maxBytes,
		MaxAttempts: attempts, Created: now, Budget: budget, FailOnBudget: spec.FailOnBudget, Trace: traceOf(ctx), Job: job, Approval: approval, Updates: updates,
		Mailbox: mailboxLimits{Messages: work.DefaultMaxQueuedGuidance, Bytes: work.DefaultMaxQueuedGuidanceBytes,
			Commands: work.DefaultMaxCommandRecords}}
	launch, digest := driver.LaunchIdentity(spec)
	req := admitRequest{Admission: driver.Admission{Record: ownerRecord{ID: id, Label: spec.Target.Label, TargetID: targetID,
		Kind: spec.Target.Kind, Created: now}, MaxOutstanding: e.cfg.limits.MaxOutstanding, MaxStarts: e.cfg.limits.MaxStarts,
		Retain: e.cfg.limits.RetainTerminal, RetainAge: e.cfg.limits.RetainAge, Want: spec.Budget.Dims(), Eff: budget.Dims(),
		Function: spec.Target.Kind == work.KindFunction, Launch: launch, Digest: digest, Approval: spec.NeedsApproval}, Work: in}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.rpcTimeout)
	defer cancel()
	var reply admitReply
	if err := e.in.object(actx, ownerService, o.ID(), hAdmit, id, req, &reply); err != nil {
		return work.Ref{}, work.ErrUnavailable.Wrap(err) // bounded by the RPC timeout alone
	}
	if err := decodeErr(reply.Error, reply.Message); err != nil {
		switch {
		case reply.Limit != "":
			driver.Refused(ctx, e.cfg.observer, spec, reply.Limit, "")
		case reply.Budget != "":
			driver.Refused(ctx, e.cfg.observer, spec, work.ClassBudgetExhausted, reply.Budget)
		}
		return work.Ref{}, err
	}
	if reply.Replay {
		return work.Ref{ID: reply.ID, TargetID: reply.TargetID, Durable: true}, nil
	}
	return work.Ref{ID: id, TargetID: targetID, Durable: true}, nil
}

// Call runs a foreground child in this process (see Engine).
func (e *Engine) Call(ctx context.Context, spec work.Spec) (string, error) {
	if err := e.admissible(); err != nil {
		return "", err
	}
	return e.local.Call(ctx, spec)
}
