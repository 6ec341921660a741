package restate

import (
	"context"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// Admit admits w in the owner's registry, which records it and starts
// its workflow in one invocation; the child runs later on the Worker that
// registered its target, from its input (Spec.Run is not used). The
// admission is bounded by the RPC timeout, not by ctx (an abandoned call
// may still take effect, and Start could not then report the Work): it
// carries an idempotency key, so a call cut off is tried again without
// admitting twice. A Spec with NeedsApproval, Job or Updates runs as the
// package doc says. With WithAdmin, a target no Worker has registered is
// work.ErrInvalidSpec (checked once per label until it is registered).
func (s *store) Admit(ctx context.Context, w driver.NewWork) (work.Ref, string, string, error) {
	e := (*engine)(s)
	spec, o := w.Spec, w.Spec.Owner
	if err := e.servedTarget(ctx, spec.Target.Label); err != nil {
		return work.Ref{}, "", "", err
	}
	id, targetID, now, budget, maxBytes := w.ID, w.TargetID, w.Created, w.Budget, w.MaxResultBytes
	input, err := e.cfg.ring.sealString(id, fieldInput, spec.Input) // WithContentKeys
	if err != nil {
		return work.Ref{}, "", "", err
	}
	attempts := e.cfg.Attempts(spec.Target.Label)
	var job *jobInput
	if spec.Job != nil {
		// A submit whose worker died is tried again, with the Work's id as
		// its key (safe only when the service honours it).
		attempts = submitAttempts
		job = &jobInput{Backoff: spec.Job.Backoff, MaxPollErrors: spec.Job.MaxPollErrors}
	}
	in := workInput{ID: id, Owner: o.ID(), Depth: o.Depth(), Label: spec.Target.Label, TargetID: targetID,
		Kind: spec.Target.Kind, Input: input, MaxDuration: budget.MaxDuration, MaxResultBytes: maxBytes,
		MaxAttempts: attempts, Created: now, Budget: budget, FailOnBudget: spec.FailOnBudget, Trace: traceOf(ctx), Job: job, Approval: w.Approval, Updates: w.Updates,
		Mailbox: w.Mailbox}
	in.AgentID, in.Provider = driver.LaunchTarget(ctx)
	req := admitRequest{Admission: w.Admission, Work: in}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.RPCTimeout)
	defer cancel()
	var reply admitReply
	if err := e.in.object(actx, ownerService, o.ID(), hAdmit, id, req, &reply); err != nil {
		return work.Ref{}, "", "", driver.Wrap(work.ErrUnavailable, err) // bounded by the RPC timeout alone
	}
	if err := decodeErr(reply.Error, reply.Message); err != nil {
		switch {
		case reply.Limit != "":
			return work.Ref{}, reply.Limit, "", err
		case reply.Budget != "":
			return work.Ref{}, work.ClassBudgetExhausted, reply.Budget, err
		}
		return work.Ref{}, "", "", err
	}
	if reply.Replay {
		return work.Ref{ID: reply.ID, TargetID: reply.TargetID, Durable: true}, "", "", nil
	}
	return work.Ref{ID: id, TargetID: targetID, Durable: true}, "", "", nil
}
