package restate

import (
	"slices"
	"time"

	restate "github.com/restatedev/sdk-go"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// Approvals, as the package doc's "Work that waits" says: the control
// object decides, and resolves the workflow's approval promise; the
// namespace's approvals index is one object (approvalsKey).

const (
	approvalsService = "Approvals"
	approvalsKey     = "all"
	approvalPromise  = "approval"

	hAnswer   = "Answer"
	hTimedOut = "ApprovalTimeout"
	hRequest  = "Request"
	hAdd      = "Add"
	hRemove   = "Remove"
	hList     = "List"
	hApproval = "Approval" // the workflow's handler resolving its approval promise

	answerApprove = "approve"
	answerStop    = "stop" // denied, cancelled or released: the Work ended
)

// approvalInfo is one awaiting Work's request (Found false: none).
type approvalInfo = driver.ApprovalInfo

// approvalEntry is one awaiting Work in the approvals index: no input.
type approvalEntry = driver.ApprovalEntry

// endAwaiting ends a Work's wait for its approval: the index forgets it
// and its workflow's promise is resolved with answer.
func (c control) endAwaiting(ctx restate.ObjectContext, s *controlState, answer string) {
	s.Awaiting, s.ApprovalInput = false, ""
	restate.ObjectSend(ctx, c.ns+"."+approvalsService, approvalsKey, hRemove).Send(s.In.ID)
	restate.WorkflowSend(ctx, workName(c.ns, s.In.Label), s.In.ID, hApproval).Send(answer)
}

// answer is Approve (EventApproved; the Work joins the dispatch queue) or
// Deny (EventDenied, then cancelled, class denied); false: the Work does
// not await approval for r (work.ErrNotFound).
func (c control) answer(ctx restate.ObjectContext, r driver.AnswerRequest) (bool, error) {
	s, ok := load(ctx)
	if !ok || !s.AwaitsApprovalFor(s.In.Owner, r) {
		return false, nil
	}
	t := now(ctx)
	if r.Approve {
		s.Approve(t)
		c.endAwaiting(ctx, s, answerApprove)
		c.record(ctx, s)
		c.rep.emit(s.In, observe.Event{Type: observe.EventApproved, Time: t})
		return true, nil
	}
	c.endAwaiting(ctx, s, answerStop)
	c.rep.emit(s.In, observe.Event{Type: observe.EventDenied, Time: t})
	c.endQueued(ctx, s, t, work.ClassDenied)
	return true, nil
}

// timedOut is the approval timer's end: a Work still awaiting is
// cancelled, class approval_timeout. It answers whether the Work was
// approved meanwhile (then it runs).
func (c control) timedOut(ctx restate.ObjectContext, _ restate.Void) (bool, error) {
	s, ok := load(ctx)
	if !ok {
		return false, nil
	}
	if s.AwaitsApproval() {
		s.Awaiting, s.ApprovalInput = false, ""
		restate.ObjectSend(ctx, c.ns+"."+approvalsService, approvalsKey, hRemove).Send(s.In.ID)
		c.endQueued(ctx, s, now(ctx), work.ClassApprovalTimeout)
		return false, nil
	}
	return s.State == work.StateQueued, nil
}

// endQueued cancels a queued Work with class.
func (c control) endQueued(ctx restate.ObjectContext, s *controlState, t time.Time, class string) {
	c.drop(s)
	ev, _ := s.Settle(work.StateCancelled, class, 0, s.In.Created, t)
	s.Spent = &observe.Usage{}
	c.record(ctx, s)
	c.rep.emit(s.In, ev)
}

// request reads a Work's approval request for r (a shared handler).
func (c control) request(ctx restate.ObjectSharedContext, r driver.AnswerRequest) (approvalInfo, error) {
	s, ok := load(ctx)
	if !ok || !s.AwaitsApprovalFor(s.In.Owner, r) {
		return approvalInfo{}, nil
	}
	return approvalInfo{Found: true, Owner: s.In.Owner, Label: s.In.Label, TargetID: s.In.TargetID,
		Input: s.ApprovalInput, Requested: s.In.Created, Deadline: s.In.Created.Add(s.In.Approval.Timeout)}, nil
}

// approvals is the namespace's index of awaiting Works.
type approvals struct {
	ns     string
	maxDur time.Duration
}

func (a approvals) definition() restate.ServiceDefinition {
	return restate.NewObject(a.ns+"."+approvalsService, append(timeouts(a.maxDur), noJournal)...).
		Handler(hAdd, restate.NewObjectHandler(func(ctx restate.ObjectContext, e approvalEntry) (restate.Void, error) {
			l, _ := restate.Get[[]approvalEntry](ctx, "l")
			if !slices.ContainsFunc(l, func(x approvalEntry) bool { return x.ID == e.ID }) {
				restate.Set(ctx, "l", append(l, e))
			}
			return restate.Void{}, nil
		})).
		Handler(hRemove, restate.NewObjectHandler(func(ctx restate.ObjectContext, id string) (restate.Void, error) {
			l, _ := restate.Get[[]approvalEntry](ctx, "l")
			if n := len(l); n > 0 {
				l = slices.DeleteFunc(l, func(x approvalEntry) bool { return x.ID == id })
				if len(l) != n {
					restate.Set(ctx, "l", l)
				}
			}
			return restate.Void{}, nil
		})).
		Handler(hList, restate.NewObjectSharedHandler(func(ctx restate.ObjectSharedContext, _ restate.Void) ([]approvalEntry, error) {
			l, _ := restate.Get[[]approvalEntry](ctx, "l")
			return l, nil
		}))
}

// awaitApproval is the workflow's wait for its approval: the promise its
// control object resolves, raced against a durable timer to the
// deadline. It answers whether the Work runs.
func (w *Worker) awaitApproval(ctx restate.WorkflowContext, in workInput) (bool, error) {
	at, err := restate.Run(ctx, func(restate.RunContext) (time.Time, error) { return time.Now(), nil }, restate.WithName("clock"))
	if err != nil {
		return false, err
	}
	timer := restate.After(ctx, max(in.Created.Add(in.Approval.Timeout).Sub(at), 0))
	answer := restate.Promise[string](ctx, approvalPromise)
	first, err := restate.WaitFirst(ctx, timer, answer)
	if err != nil {
		return false, err
	}
	if first == answer {
		v, err := answer.Result()
		return err == nil && v == answerApprove, err
	}
	run, err := restate.Object[bool](ctx, w.cfg.ns+"."+controlService, in.ID, hTimedOut).Request(restate.Void{})
	return run, err
}
