package temporal

import (
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// workWorkflow returns the Work workflow, reporting to obs: it runs one
// Work, its attempts as activities on the target's queue, its state,
// guidance mailbox and cancellation. Its result is the output (completed
// Work only). dc is the Worker's data converter (WithDataConverter).
func workWorkflow(obs observe.Observer, dc converter.DataConverter) func(workflow.Context, workInput) (workOutcome, error) {
	stash := newSpanStash()
	return func(ctx workflow.Context, in workInput) (workOutcome, error) {
		return runWork(ctx, in, obs, stash, dc)
	}
}

func runWork(ctx workflow.Context, in workInput, obs observe.Observer, stash *spanStash, dc converter.DataConverter) (workOutcome, error) {
	w := &workRun{in: in, WorkState: driver.WorkState{State: work.StateQueued}, dc: dc}
	w.resume()
	// From the start: an answer delivered with the first workflow task is
	// validated as its handler is registered.
	w.Awaiting = in.Approval != nil && in.Cont == nil
	w.ev = newLifecycle(ctx, obs, in, stash)
	if w.Awaiting {
		w.ev.emit(ctx, observe.Event{Type: observe.EventApprovalRequested})
	}
	actx, cancelAct := workflow.WithCancel(ctx)
	w.cancelAct = cancelAct
	if err := w.handlers(ctx); err != nil {
		return workOutcome{}, err
	}
	if err := w.waitHandlers(ctx); err != nil {
		return workOutcome{}, err
	}
	if err := w.updateHandlers(ctx); err != nil { // workflow_updates.go
		return workOutcome{}, err
	}
	if in.Approval != nil && in.Cont == nil {
		w.awaitApproval(ctx)
	}
	if in.Job != nil {
		res, cont := w.runJob(ctx, actx)
		if cont != nil {
			return workOutcome{}, cont
		}
		return w.end(ctx, res), nil
	}
	// Denied, timed out or cancelled awaiting approval. (Other Work
	// cancelled while queued goes through the activity call, a no-op on a
	// cancelled context, as before approvals: its histories replay.)
	if in.Approval != nil && w.State == work.StateCancelled {
		return w.end(ctx, workOutcome{State: work.StateCancelled}), nil
	}
	ao := workflow.ActivityOptions{
		TaskQueue:           in.TaskQueue,
		StartToCloseTimeout: startToClose(in.MaxDuration),
		HeartbeatTimeout:    in.HeartbeatTimeout,
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumAttempts: int32(max(in.MaxAttempts, 1))},
	}
	var out runOutcome
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(actx, ao), RunActivityName, runInput{
		ID: in.ID, Owner: in.Owner, Depth: in.Depth, Label: in.Label, Kind: in.Kind, Input: in.Input,
		MaxDuration: in.MaxDuration, MaxResultBytes: in.MaxResultBytes, Budget: in.Budget,
		FailOnBudget: in.FailOnBudget, Updates: in.Updates != nil}).Get(ctx, &out)
	out, err = w.rejoin(ctx, actx, out, err) // workflow_rejoin.go
	res := w.settle(out, err)
	var spent *observe.Usage // unknown when the attempt failed (a Work that never ran spent nothing: Record)
	if err == nil {
		spent = &out.Usage
	}
	for _, ev := range w.Spend(out.Budget, out.Progress, spent, workflow.Now(ctx)) {
		w.ev.emit(ctx, ev)
	}
	return w.end(ctx, res), nil
}

// end settles the Work with res, lets the handlers in progress finish and
// tells the holders of undelivered guidance to delete themselves.
func (w *workRun) end(ctx workflow.Context, res workOutcome) workOutcome {
	w.finish(ctx, res)
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	// The holders of undelivered guidance delete themselves.
	var futs []workflow.Future
	for _, ref := range w.dropped {
		futs = append(futs, workflow.SignalExternalWorkflow(ctx, ref, "", signalDone, nil))
	}
	for _, f := range futs {
		_ = f.Get(ctx, nil)
	}
	res.Final = &w.last
	return res
}

type workRun struct {
	in workInput
	// The Work's lifecycle (its registry record, Record), and the decisions
	// on it that the Restate runner makes too (driver.WorkState).
	driver.WorkState
	cancelAct workflow.CancelFunc
	ev        *lifecycle
	mail      driver.Mailbox[guidanceRef]
	dropped   []string    // holders of messages that will never be delivered
	last      ownerRecord // the last record this workflow sent to it
	// Its updates and questions (workflow_updates.go).
	upd updateState
	// dc is the Worker's data converter: it opens a timed-out attempt's
	// heartbeat details where the client's failure converter cannot
	// (lostAt).
	dc converter.DataConverter
}

func (w *workRun) visible(owner string) bool { return owner == w.in.Owner && !w.Detached }

// seenBy validates an update from owner: ErrNotFound unless the Work is
// visible to it.
func (w *workRun) seenBy(owner string) error {
	if !w.visible(owner) {
		return workErr(work.ErrNotFound)
	}
	return nil
}

func (w *workRun) handlers(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, queryCommand, func(command string) (driver.Command, error) {
		return w.mail.Commands[command], nil
	}); err != nil {
		return err
	}
	// started: an attempt begins. It answers whether the attempt may run
	// and, when it may, the record the attempt's worker sends to the
	// owner's registry before it runs the child (an update from the worker
	// is applied in one call; one from this workflow would take two more
	// workflow tasks, here and after its delivery).
	if err := workflow.SetUpdateHandler(ctx, updateStarted, func(ctx workflow.Context, attempt int) (startedReply, error) {
		switch w.State {
		case work.StateQueued, work.StateRunning:
		default:
			return startedReply{}, nil
		}
		if ev, first := w.Start(attempt, w.in.Created, workflow.Now(ctx)); first {
			w.ev.emit(ctx, ev)
		}
		return startedReply{Run: true, Owner: w.in.OwnerWorkflow, Record: w.record(ctx)}, nil
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, updateCancel, func(ctx workflow.Context, owner string) (driver.CancelReply, error) {
		return w.cancel(ctx), nil
	}, workflow.UpdateHandlerOptions{Validator: w.seenBy}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, updateDetach, func(ctx workflow.Context, owner string) error {
		w.Detached = true
		w.ev.emit(ctx, observe.Event{Type: observe.EventDetached})
		w.tellOwner(ctx, updateDetached, w.in.ID)
		return nil
	}, workflow.UpdateHandlerOptions{Validator: w.seenBy}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, updateSend, func(ctx workflow.Context, r sendRequest) (sendReply, error) {
		if c, ok := w.mail.Commands[r.Command]; ok && r.Command != "" {
			return c.Reply, nil // the validator checked the digest
		}
		reply := w.mail.Accept(guidanceRef{Ref: r.Ref, Bytes: r.Bytes}, r.Bytes, r.Command, r.Digest, workflow.Now(ctx), r.Ref, w.in.Mailbox.Commands)
		w.ev.emit(ctx, observe.Event{Type: observe.EventGuidanceAccepted, Count: 1})
		w.upd.Answer(w.upd.log) // guidance answers the open questions (workflow_updates.go)
		return reply, nil
	}, workflow.UpdateHandlerOptions{Validator: w.validateSend}); err != nil {
		return err
	}
	// drain: the child's boundary reads the holders of the guidance
	// queued so far, in order; ack then takes the first n of them (read).
	// A worker that dies between the two leaves them queued.
	if err := workflow.SetUpdateHandler(ctx, updateDrain, func(ctx workflow.Context) ([]string, error) {
		refs := make([]string, len(w.mail.Pending))
		for i, p := range w.mail.Pending {
			refs[i] = p.Ref
		}
		return refs, nil
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, updateAck, func(ctx workflow.Context, n int) error {
		if n := len(w.mail.Take(max(n, 0), func(g guidanceRef) int { return g.Bytes })); n > 0 {
			w.ev.emit(ctx, observe.Event{Type: observe.EventGuidanceDelivered, Count: n})
		}
		return nil
	}); err != nil {
		return err
	}
	release := workflow.GetSignalChannel(ctx, signalRelease)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for release.Receive(ctx, nil) {
			if !w.Detached {
				w.Detached = true
				w.ev.emit(ctx, observe.Event{Type: observe.EventDetached})
			}
			w.cancel(ctx)
		}
	})
	return nil
}

func (w *workRun) validateSend(r sendRequest) error {
	if !w.visible(r.Owner) {
		return workErr(work.ErrNotFound)
	}
	if _, refusal := w.mail.Check(w.in.Kind, r.Answer, r.Command, r.Digest, r.Bytes, w.State.Terminal(), w.in.Mailbox); refusal != nil {
		return workErr(refusal)
	}
	return nil
}

// cancel decides a cancel request and returns its receipt. The receipt is
// the decision's: w.notify yields (it waits for the owner's registry), and
// the attempt's end may settle the Work meanwhile, so the state is taken
// before it, never read after (a cancel accepted on running Work says
// cancel-requested even when the completion then wins).
func (w *workRun) cancel(ctx workflow.Context) driver.CancelReply {
	now := workflow.Now(ctx)
	from, ev, reply := w.Cancel(w.in.Created, now)
	if ev.Type == "" {
		return reply
	}
	if from == work.StateQueued {
		w.dropGuidance(ctx)
	}
	w.ev.emit(ctx, ev)
	w.cancelAct()
	w.notify(ctx)
	return reply
}

// settle maps the last attempt's end to the Work's terminal state.
func (w *workRun) settle(out runOutcome, err error) workOutcome {
	if w.State == work.StateCancelled { // cancelled while queued
		return workOutcome{State: work.StateCancelled}
	}
	var canceled *temporal.CanceledError
	var timeout *temporal.TimeoutError
	switch {
	case err == nil && out.Class == "":
		return workOutcome{State: work.StateCompleted, Output: out.Output, Bytes: len(out.Output)}
	case err == nil && out.Class == classNotRun:
		return workOutcome{State: work.StateCancelled}
	case err == nil:
		st, class := driver.Settlement(out.Class, w.State == work.StateCancelRequested)
		if class == out.Class {
			return workOutcome{State: st, Class: class, Bytes: out.Bytes}
		}
		return workOutcome{State: st, Class: class}
	case errors.As(err, &canceled):
		if w.State == work.StateCancelRequested || w.State == work.StateQueued {
			return workOutcome{State: work.StateCancelled}
		}
		return workOutcome{State: work.StateFailed, Class: work.ClassError}
	case errors.As(err, &timeout):
		if timeout.TimeoutType() == enumspb.TIMEOUT_TYPE_START_TO_CLOSE {
			return workOutcome{State: work.StateFailed, Class: work.ClassDeadline}
		}
		// A heartbeat or schedule timeout: the process running the
		// attempt is gone.
		return workOutcome{State: work.StateFailed, Class: work.ClassWorkerLost}
	}
	return workOutcome{State: work.StateFailed, Class: work.ClassError}
}

func (w *workRun) finish(ctx workflow.Context, res workOutcome) {
	// Undelivered guidance is dropped at the end, before the terminal
	// event (as in-process).
	w.dropGuidance(ctx)
	if ev, changed := w.Settle(res.State, res.Class, res.Bytes, w.in.Created, workflow.Now(ctx)); changed {
		w.ev.emit(ctx, ev)
	}
	w.notify(ctx)
}

// dropGuidance drops the undelivered guidance of a Work that ends.
func (w *workRun) dropGuidance(ctx workflow.Context) {
	if d := w.mail.Drop(); len(d) > 0 {
		for _, p := range d {
			w.dropped = append(w.dropped, p.Ref)
		}
		w.ev.emit(ctx, observe.Event{Type: observe.EventGuidanceDropped, Count: len(d)})
	}
}

// notify tells the owner's registry the Work's state (and waits until the
// update is applied, so that the owner's list never lags a reply).
func (w *workRun) notify(ctx workflow.Context) {
	w.last = w.record(ctx)
	w.tellOwner(ctx, updateRecord, w.last)
}

// record is the Work's state for its owner's registry, at the next
// revision.
//
// A revision is above every revision of an earlier workflow task: the
// task's WorkflowTaskStarted event id, shifted, plus a count within the
// task. A task whose local activity sent a record and that was then
// lost (its worker died, or the server refused its completion) runs again
// with a later event id, and may decide otherwise (an update it had is not
// delivered again, an activity's completion came meanwhile): its records
// must not look like the lost task's repeats.
func (w *workRun) record(ctx workflow.Context) ownerRecord {
	w.Rev = max(w.Rev+1, int64(workflow.GetInfo(ctx).GetCurrentHistoryLength())<<revTaskShift)
	w.Updates = w.upd.log.Len()
	return w.Record(w.in.ID)
}

// revTaskShift leaves room for the records of one workflow task in a
// revision.
const revTaskShift = 16

// tellOwner sends update name to the owner's registry and returns once
// the registry has applied it. It is sent from a local activity, within
// the workflow task that decides it: a signal from the workflow itself
// would take a workflow task more, and one this workflow sends as it
// closes would never be delivered. A send from a task that is then lost
// (its worker died) is harmless: the registry applies a transition only
// over an older revision, the task that runs again sends at later
// revisions, and a detach is idempotent.
func (w *workRun) tellOwner(ctx workflow.Context, name string, arg any) {
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		ScheduleToCloseTimeout: 24 * time.Hour,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumInterval: 10 * time.Second},
	})
	// It is retried until the registry has it: the registry counts the
	// Work against its owner's limits until it learns that it ended. A
	// registry that is gone (released) ends it at once.
	_ = workflow.ExecuteLocalActivity(lctx, tellOwnerName, w.in.OwnerWorkflow, name, arg).Get(ctx, nil)
}
