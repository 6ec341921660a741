package restate

import (
	"log/slog"
	"time"

	restate "github.com/restatedev/sdk-go"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// controlState is one Work's state machine and mailbox, the state of its
// control object. In holds no child input.
type controlState struct {
	In workInput
	driver.WorkState
	// RejoinBy: the rejoin window of a running attempt that a retried
	// step found unfinished closes then (rejoin.go).
	RejoinBy time.Time `json:",omitzero"`
	// Output is a completed Work's output, kept while its owner's
	// registry keeps its record (then the registry has this object
	// forget it).
	Output string `json:",omitempty"`
	// ApprovalInput is the child's input while it awaits its approval
	// (for Pending); WorkState.Enqueued: when it was approved.
	ApprovalInput string `json:",omitempty"`
	// Upd is the Work's updates (nil: its Spec declares none).
	Upd *updState `json:",omitempty"`
	// The guidance mailbox: the texts until the child takes them or the
	// Work ends; the command records keep digests only.
	driver.Mailbox[string]
}

const stateKey = "s"

// control is the control object's handlers, reporting to rep.
type control struct {
	ns     string
	rep    *reporter
	maxDur time.Duration // the services' timeouts' floor (see timeouts)
	ring   *keyRing      // WithContentKeys: opens update values (updates.go)
	log    *slog.Logger  // the SDK's log (WithLogger)
}

func (c control) definition() restate.ServiceDefinition {
	return restate.NewObject(c.ns+"."+controlService, append(timeouts(c.maxDur), noJournal)...).
		Handler(hInit, restate.NewObjectHandler(c.init)).
		Handler(hClaim, restate.NewObjectHandler(c.claim)).
		Handler(hCancel, restate.NewObjectHandler(c.cancel)).
		Handler(hFinish, restate.NewObjectHandler(c.finish)).
		Handler(hSend, restate.NewObjectHandler(c.send)).
		// take answers with the guidance texts: Restate keeps no answer of it
		// (it keeps an ingress call's answer a day by default).
		Handler(hTake, restate.NewObjectHandler(c.take, readOnce)).
		Handler(hDetach, restate.NewObjectHandler(c.detach)).
		Handler(hDrop, restate.NewObjectHandler(c.release)).
		Handler(hWaiting, restate.NewObjectHandler(c.waiting)).
		Handler(hPolled, restate.NewObjectHandler(c.polled)).
		Handler(hAnswer, restate.NewObjectHandler(c.answer)).
		Handler(hTimedOut, restate.NewObjectHandler(c.timedOut)).
		Handler(hRequest, restate.NewObjectSharedHandler(c.request, readOnce)).
		Handler(hReport, restate.NewObjectHandler(c.report)).
		Handler(hQTimedOut, restate.NewObjectHandler(c.questionTimedOut)).
		Handler(hQuestion, restate.NewObjectSharedHandler(c.question, readOnce)).
		Handler(hUpdates, restate.NewObjectSharedHandler(c.updates, readOnce)).
		Handler(hSizes, restate.NewObjectSharedHandler(c.updateSizes)).
		Handler(hForget, restate.NewObjectHandler(c.forget)).
		Handler(hOutput, restate.NewObjectSharedHandler(c.output, readOnce)).
		Handler(hPeek, restate.NewObjectSharedHandler(c.peek)).
		Handler(hProg, restate.NewObjectHandler(c.progress))
}

// readOnce is the option of the handlers whose answer is content read
// once by its caller (guidance, the output, updates, a question, an
// approval's input): Restate keeps no completed invocation of them, so
// that nothing can attach to one and read its answer again (it keeps a
// completed invocation a day by default). Peek, Progress and UpdateSizes
// answer a state, counts and sizes only, and stay countable
// (cost_test.go).
var readOnce = restate.WithIdempotencyRetention(0)

// now is the handler's clock, journaled (a replay sees the same time).
func now(ctx restate.Context) time.Time {
	t, _ := restate.Run(ctx, func(restate.RunContext) (time.Time, error) { return time.Now().UTC(), nil },
		restate.WithName("now"))
	return t
}

func load(ctx restate.ObjectSharedContext) (*controlState, bool) {
	s, err := restate.Get[*controlState](ctx, stateKey)
	if err != nil || s == nil {
		return nil, false
	}
	return s, true
}

// init creates the Work's state, queued (the owner's admission calls it
// before the Work's workflow is sent its start).
func (c control) init(ctx restate.ObjectContext, in workInput) (restate.Void, error) {
	if _, ok := load(ctx); ok {
		return restate.Void{}, nil
	}
	input := in.Input
	in.Input = ""
	s := &controlState{In: in, WorkState: driver.WorkState{State: work.StateQueued}}
	if in.Updates != nil {
		s.Upd = &updState{Log: driver.NewUpdateLog(*in.Updates).State()}
	}
	if in.Approval != nil {
		s.Awaiting, s.ApprovalInput = true, input
		restate.ObjectSend(ctx, c.ns+"."+approvalsService, approvalsKey, hAdd).
			Send(approvalEntry{ID: in.ID, Owner: in.Owner, Requested: in.Created})
	}
	restate.Set(ctx, stateKey, s)
	c.rep.emit(in, observe.Event{Type: observe.EventQueued, To: work.StateQueued, Time: in.Created})
	if in.Approval != nil {
		c.rep.emit(in, observe.Event{Type: observe.EventApprovalRequested, Time: in.Created})
	}
	return restate.Void{}, nil
}

// record sends the Work's state to its owner's registry at the next
// revision and waits until it is applied, so that a reply never runs
// ahead of the owner's list.
func (c control) record(ctx restate.ObjectContext, s *controlState) {
	s.Rev++
	restate.Set(ctx, stateKey, s)
	_, _ = restate.Object[restate.Void](ctx, c.ns+"."+ownerService, s.In.Owner, hRecord).Request(s.Record(s.In.ID))
}

// claim starts an attempt: it is the "started" marker of the recovery
// rule. An attempt that finds an earlier one started and not finished
// (its process died) runs only when the target is retryable and attempts
// are left; else the Work is lost.
func (c control) claim(ctx restate.ObjectContext, _ restate.Void) (claimReply, error) {
	s, ok := load(ctx)
	if !ok {
		return claimReply{}, nil
	}
	switch s.State {
	case work.StateQueued:
		t := now(ctx)
		ev, _ := s.Start(1, s.In.Created, t)
		c.record(ctx, s)
		c.rep.emit(s.In, ev)
		return claimReply{Run: true, Attempt: 1, Started: t}, nil
	case work.StateRunning, work.StateCancelRequested:
		if s.Attempt >= max(s.In.MaxAttempts, 1) {
			// The process running it may hold it still (the server was
			// away, or its connection): it takes it back within the
			// rejoin window, else the Work is lost.
			t := now(ctx)
			if s.RejoinBy.IsZero() {
				s.RejoinBy = t.Add(rejoinWindow)
				restate.Set(ctx, stateKey, s)
			}
			if t.Before(s.RejoinBy) {
				return claimReply{Busy: true, Attempt: s.Attempt}, nil
			}
			return claimReply{Lost: true, Attempt: s.Attempt}, nil
		}
		s.Attempt++
		c.record(ctx, s)
		return claimReply{Run: true, Attempt: s.Attempt, Cancel: s.State == work.StateCancelRequested, Started: s.Started}, nil
	}
	return claimReply{}, nil
}

// cancel is Engine.Cancel's decision: queued Work is cancelled, running
// Work becomes cancel-requested (its attempt sees it through peek or its
// next boundary), terminal Work is not accepted.
func (c control) cancel(ctx restate.ObjectContext, owner string) (driver.CancelReply, error) {
	s, ok := load(ctx)
	if !ok || s.In.Owner != owner || s.Detached {
		return driver.CancelReply{State: "not_found"}, nil
	}
	return c.doCancel(ctx, s), nil
}

func (c control) doCancel(ctx restate.ObjectContext, s *controlState) driver.CancelReply {
	t := now(ctx)
	from, ev, reply := s.Cancel(s.In.Created, t)
	switch {
	case from == work.StateQueued:
		if s.Awaiting {
			c.endAwaiting(ctx, s, answerStop)
		}
		c.drop(s)
		c.record(ctx, s)
		c.rep.emit(s.In, ev)
	case from == work.StateRunning:
		c.record(ctx, s)
		c.rep.emit(s.In, ev)
		// The attempt (or a job between polls) waits on its workflow's
		// stop promise.
		restate.WorkflowSend(ctx, workName(c.ns, s.In.Label), s.In.ID, hStop).Send(restate.Void{})
	}
	return reply
}

// finish settles the Work with its last attempt's outcome.
func (c control) finish(ctx restate.ObjectContext, out runOutcome) (restate.Void, error) {
	s, ok := load(ctx)
	if !ok || s.State.Terminal() {
		return restate.Void{}, nil
	}
	t := now(ctx)
	state, class := driver.Settlement(out.Class, s.State == work.StateCancelRequested)
	ev, _ := s.Settle(state, class, out.Bytes, s.In.Created, t)
	if s.HasResult {
		s.Output = out.Output
	}
	for _, e := range s.Spend(out.Budget, out.Progress, out.Usage, t) {
		c.rep.emit(s.In, e)
	}
	// Undelivered guidance is dropped after the attempt's events and
	// before the terminal one (as in-process).
	c.drop(s)
	c.record(ctx, s)
	c.rep.emit(s.In, ev)
	if s.Detached {
		restate.ClearAll(ctx) // nobody can read it any more
	}
	return restate.Void{}, nil
}

// forget drops a terminal Work's state (its owner's registry no longer
// keeps its record: evicted, detached or released).
func (c control) forget(ctx restate.ObjectContext, _ restate.Void) (restate.Void, error) {
	if s, ok := load(ctx); ok && s.State.Terminal() {
		restate.ClearAll(ctx)
	}
	return restate.Void{}, nil
}

type outputReply struct {
	Found  bool
	Output string `json:",omitempty"`
}

// output reads a completed Work's output for its owner (a shared
// handler).
func (c control) output(ctx restate.ObjectSharedContext, owner string) (outputReply, error) {
	s, ok := load(ctx)
	if !ok || s.In.Owner != owner || s.Detached || !s.HasResult {
		return outputReply{}, nil
	}
	return outputReply{Found: true, Output: s.Output}, nil
}

// drop drops undelivered guidance (the Work ends).
func (c control) drop(s *controlState) {
	if n := len(s.Drop()); n > 0 {
		c.rep.emit(s.In, observe.Event{Type: observe.EventGuidanceDropped, Count: n})
	}
}

// detach hides a live Work from its owner (Engine.Detach).
func (c control) detach(ctx restate.ObjectContext, owner string) (bool, error) {
	s, ok := load(ctx)
	if !ok || s.In.Owner != owner || s.Detached {
		return false, nil
	}
	s.Detached = true
	restate.Set(ctx, stateKey, s)
	_, _ = restate.Object[restate.Void](ctx, c.ns+"."+ownerService, s.In.Owner, hDetached).Request(s.In.ID)
	c.rep.emit(s.In, observe.Event{Type: observe.EventDetached, Time: now(ctx)})
	return true, nil
}

// release is the owner's Release reaching one of its live Works:
// detached and cancelled.
func (c control) release(ctx restate.ObjectContext, _ restate.Void) (restate.Void, error) {
	s, ok := load(ctx)
	if !ok || s.State.Terminal() {
		return restate.Void{}, nil
	}
	if !s.Detached {
		s.Detached = true
		c.rep.emit(s.In, observe.Event{Type: observe.EventDetached, Time: now(ctx)})
	}
	c.doCancel(ctx, s)
	if s.State.Terminal() {
		restate.ClearAll(ctx) // released: nobody can read it any more
	} else {
		restate.Set(ctx, stateKey, s)
	}
	return restate.Void{}, nil
}

// peek is the attempt's view between boundaries (a shared handler: it
// never waits for the exclusive ones).
func (c control) peek(ctx restate.ObjectSharedContext, _ restate.Void) (controlView, error) {
	s, ok := load(ctx)
	if !ok {
		return controlView{}, nil
	}
	return controlView{State: s.State, Progress: s.Progress, Attempt: s.Attempt}, nil
}

// progress keeps a running attempt's progress counts p (for Status; the
// registry's record gets the last ones when the Work settles) and
// answers as peek.
func (c control) progress(ctx restate.ObjectContext, p observe.Progress) (controlView, error) {
	s, ok := load(ctx)
	if !ok {
		return controlView{}, nil
	}
	if !s.State.Terminal() && s.Progress != p {
		s.Progress = p
		restate.Set(ctx, stateKey, s)
	}
	return controlView{State: s.State, Progress: s.Progress, Attempt: s.Attempt}, nil
}
