package temporal

import (
	"context"
	"errors"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// Admit admits w in the owner's registry (atomically, against its
// limits) and starts its workflow. The child runs later on a Worker that
// registered its target, from its input (Spec.Run is not used).
//
// Its two calls to Temporal (the admission in the owner's registry, then
// the start of the Work's workflow) are bounded by the RPC timeout but not
// by ctx: a call a cancelled client abandons may still take effect on the
// server, and Start could then neither report the Work (its caller was
// told it failed) nor forget it safely (a registry record without its
// workflow, or a running workflow its registry forgot). ctx's values
// reach the Observer's events.
func (s *store) Admit(caller context.Context, w driver.NewWork) (work.Ref, string, string, error) {
	e := (*engine)(s)
	spec, o := w.Spec, w.Spec.Owner
	launch := newLaunchInfo(caller)
	base := context.WithoutCancel(caller)
	ownerWF := ownerWorkflowID(o.ID())
	// The admission is tried again when it is cut off (a registry too
	// busy to answer within the RPC timeout), while the caller waits: the server answers a repeat
	// of the update's id with the first's outcome, and a registry that
	// continued as new in between recognises the Work id (driver's
	// Decision.Again).
	var reply admitReply
	if err := retryWhile(caller, base, e.cfg.RPCTimeout, tries, func(ctx context.Context) error {
		return e.updateOwner(ctx, o, updateAdmit, &reply, w.Admission, "admit/"+w.ID)
	}); err != nil {
		reason, short := refusalOf(err)
		return work.Ref{}, reason, short, fromTemporal(err)
	}
	if reply.Replay {
		return work.Ref{ID: reply.ID, TargetID: reply.TargetID, Durable: true}, "", "", nil
	}
	budget := w.Budget
	driver.SetBudgetDims(&budget, reply.Budget)
	attempts := e.cfg.Attempts(spec.Target.Label)
	in := workInput{ID: w.ID, Owner: o.ID(), Depth: o.Depth(), Label: spec.Target.Label, TargetID: w.TargetID,
		Kind: spec.Target.Kind, Input: spec.Input, TaskQueue: activityQueue(e.cfg.taskQueue, spec.Target.Label),
		OwnerWorkflow: ownerWF, MaxDuration: budget.MaxDuration, MaxResultBytes: w.MaxResultBytes, MaxAttempts: attempts,
		HeartbeatTimeout: e.cfg.heartbeatTimeout, Created: w.Created,
		Mailbox: w.Mailbox, Launch: launch, Budget: budget, FailOnBudget: spec.FailOnBudget,
		Approval: w.Approval, Updates: w.Updates}
	e.waitInput(spec, &in)
	ctx, cancel := e.rpc(base)
	defer cancel()
	_, err := e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: w.ID, TaskQueue: e.cfg.taskQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(ownerKey.ValueSet(o.ID())),
		Memo:                  startMemo(spec, w.Created),
	}, WorkWorkflowName, in)
	if err != nil {
		_ = e.tell(base, o, updateForget, w.ID)
		return work.Ref{}, "", "", fromTemporal(err)
	}
	return work.Ref{ID: w.ID, TargetID: w.TargetID, Durable: true}, "", "", nil
}

// Admissible returns the first invalid limit or budget option's error.
func (s *store) Admissible() error { return s.cfg.Err }

func activityQueue(base, label string) string { return base + "." + label }

// updateOwner sends an update to o's registry, starting the registry if
// it is not running (updateWithStart). id is the update's id ("": a new
// one), which makes a repeat answer as the first.
func (e *engine) updateOwner(ctx context.Context, o work.Owner, name string, out any, arg any, id string) error {
	st := ownerState{Owner: o.ID(), Registry: driver.Registry{Retain: e.cfg.Limits.RetainTerminal, RetainAge: e.cfg.Limits.RetainAge}, Grace: e.cfg.admissionGrace}
	return updateWithStart(ctx, e.c, ownerWorkflowID(o.ID()), e.cfg.taskQueue, OwnerWorkflowName, st, id, name, out, arg)
}

// refusalOf returns why the owner's registry refused a start: a limit's
// name (observe.LimitOutstanding, observe.LimitStarts), or
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
