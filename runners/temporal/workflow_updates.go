package temporal

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// Children that talk back, in the Work workflow, as the package doc says:
// the updates and questions are workflow state (carried across
// continue-as-new in updateCarry), only a question's wait the attempt's.

// updateState is a Work workflow's update state: its log and its
// questions' state.
type updateState struct {
	log *driver.UpdateLog // nil: the Spec declares no updates
	driver.Questions
}

// updateHandlers restores the Work's update state (a continued run's from
// its carry) and registers the report and await-answer updates and the
// updates queries.
func (w *workRun) updateHandlers(ctx workflow.Context) error {
	if p := w.in.Updates; p != nil {
		w.upd.log = driver.NewUpdateLog(*p)
		w.restoreUpdates(w.in.Carry)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, updateReport, w.report,
		workflow.UpdateHandlerOptions{Validator: w.validateReport}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, updateAwait, w.awaitAnswer); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, queryUpdates, func(q driver.UpdatesQuery) (driver.UpdatesReply, error) {
		if !w.visible(q.Owner) {
			return driver.UpdatesReply{}, nil
		}
		return driver.UpdatesReply{Found: true, Updates: w.upd.log.After(q.After)}, nil
	}); err != nil {
		return err
	}
	return workflow.SetQueryHandler(ctx, queryUpdateMap, func(q driver.UpdatesQuery) (driver.UpdateMetaReply, error) {
		if !w.visible(q.Owner) {
			return driver.UpdateMetaReply{}, nil
		}
		return driver.UpdateMetaReply{Found: true, Updates: driver.UpdateMetas(w.upd.log.After(q.After))}, nil
	})
}

// validateReport keeps out of the history an update that cannot be
// accepted as a new one (the Work is ending, its updates are at their
// count, or its value does not fit in the bytes left), so that a child
// that goes on reporting what is refused does not grow it: the shared
// decision, on a copy of the log, refuses it here (the rejection carries
// the reason; the attempt reports its EventUpdate), unless it repeats an
// accepted update (the handler answers the first receipt). Every other
// update goes to the handler, which decides on the log itself. Only these
// refusals pay for the copy.
func (w *workRun) validateReport(r driver.UpdateReport) error {
	l := w.upd.log
	if l == nil {
		return nil
	}
	ending := w.State == work.StateCancelRequested || w.State.Terminal()
	p := l.Policy()
	if !ending && l.Len() < p.MaxUpdates && l.Bytes()+len(r.Value) <= p.MaxBytes {
		return nil
	}
	cp := driver.RestoreUpdateLog(l.State())
	if ending {
		cp.End()
	}
	if _, reason := cp.Accept(r.Key, r.Value, r.Question, time.Time{}); reason != "" {
		if w.State.Terminal() {
			return workErr(work.ErrTerminal) // ending, with no event after the terminal one
		}
		return workErr(driver.UpdateRefusal(reason))
	}
	return nil
}

// report decides on an update the child reports: refused (the reason,
// EventUpdate with it), a repeat (the first receipt, nothing reported) or
// accepted (EventUpdate, and a record to the owner's registry with the
// new count, before the reply: a Subscription's notice and Updates see it
// once the child has its receipt). A Work that is cancel-requested or
// settled refuses it (observe.UpdateRefusedEnding; a settled Work reports no
// event after its terminal one). A repeat of an accepted update still
// gets its first receipt then.
func (w *workRun) report(ctx workflow.Context, r driver.UpdateReport) (driver.UpdateReportReply, error) {
	u := &w.upd
	reply, opens := u.Report(u.log, w.State, r.Key, r.Value, r.Question, workflow.Now(ctx))
	if reply.Reason == "" && reply.Duplicate || w.State.Terminal() {
		// A repeat reports nothing new; a settled Work's events have ended
		// (a child's stray report after its attempt returned).
		return reply, nil
	}
	w.ev.emit(ctx, observe.Event{Type: observe.EventUpdate, Seq: reply.Seq, Bytes: len(r.Value), Question: r.Question, ErrorClass: reply.Reason})
	if opens {
		u.OpenedAt = workflow.Now(ctx)
	}
	if reply.Reason == "" {
		w.notify(ctx)
	}
	return reply, nil
}

// awaitAnswer is the wait of the child's open questions: it answers true
// once guidance has answered them, false when their timeout (from when
// the first of them was asked) passes first (they close unanswered) or
// the Work ends. With none open it answers how the last ones closed. A
// cancel ends the attempt's side of the wait (its context) first.
func (w *workRun) awaitAnswer(ctx workflow.Context) (bool, error) {
	u := &w.upd
	if len(u.log.Open()) == 0 {
		return u.Answered, nil
	}
	gen := u.Gen
	closed := func() bool { return u.Gen != gen || w.State.Terminal() }
	if d := u.Deadline(u.log).Sub(workflow.Now(ctx)); d > 0 {
		_, _ = workflow.AwaitWithTimeout(ctx, d, closed)
	}
	if u.Gen == gen && w.State.Terminal() {
		return false, nil
	}
	answered, _ := u.TimeOut(u.log, gen) // timed out, unless closed meanwhile
	return answered, nil
}

// carryUpdates is the Work's update state for its next run (nil: none).
func (w *workRun) carryUpdates() *updateCarry {
	u := &w.upd
	if u.log == nil {
		return nil
	}
	return &updateCarry{Log: u.log.State(), OpenedAt: u.OpenedAt, Answered: u.Answered}
}

// restoreUpdates restores the update state of a continued run from c
// (driver.RestoreUpdateLog: the log decides as the carried one would).
func (w *workRun) restoreUpdates(c *updateCarry) {
	if c == nil {
		return
	}
	u := &w.upd
	u.log = driver.RestoreUpdateLog(c.Log)
	u.OpenedAt, u.Answered = c.OpenedAt, c.Answered
}
