package temporal

import (
	"context"
	"errors"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// The attempt's side of children that talk back: the driver.Remote hooks
// that send a child's updates to its Work's workflow (which decides on
// them) and hold the wait of its questions.

// reportTries bounds the tries of a report whose call was cut off (a
// retry is safe: the update's key makes it idempotent).
const reportTries = 3

// reportUpdate is the Remote.Update of an attempt (ctx is the attempt's):
// the Work's workflow decides (report), and reports the EventUpdate of
// what its handler decided. The refusals decided elsewhere are reported
// here, to the Worker's Observer: a Spec that declares no updates
// (observe.UpdateRefusedNotDeclared, without a call), an update the
// workflow's validator refused (kept out of its history), and a call that
// failed otherwise ("unavailable": nothing was accepted that the child
// cannot retry with the same key). A Work that settled (its workflow
// closed, or its validator says so) refuses it as observe.UpdateRefusedEnding
// with no event (none follows the terminal one). The report is not cut off by the attempt's cancel: the workflow
// then refuses it as ending.
func (w *Worker) reportUpdate(ctx context.Context, in runInput) func(key string, value []byte, question bool) (work.UpdateReceipt, string) {
	a := driver.Attempt{ID: in.ID, Owner: in.Owner, Depth: in.Depth, Label: in.Label, Kind: in.Kind}
	return driver.ReportUpdates(w.cfg.Limits.Observer, a, in.Updates, func(key string, value []byte, question bool) (work.UpdateReceipt, string, bool) {
		rctx := context.WithoutCancel(ctx)
		for try := 1; ; try++ {
			var r driver.UpdateReportReply
			err := fromTemporal(w.update(rctx, in.ID, updateReport, &r, driver.UpdateReport{Key: key, Value: value, Question: question}))
			var we *work.Error
			switch {
			case err == nil:
				// A repeat after a try that was cut off is the child's first
				// report: the cut-off try was applied.
				return work.UpdateReceipt{Seq: r.Seq, Duplicate: r.Duplicate && try == 1}, r.Reason, false
			case errors.Is(err, work.ErrUpdateRefused) && errors.As(err, &we) && we.Class != "":
				return work.UpdateReceipt{}, we.Class, true // the validator's
			case errors.Is(err, errWorkflowClosed) || errors.Is(err, work.ErrTerminal):
				// Settled: no event after the terminal one.
				return work.UpdateReceipt{}, observe.UpdateRefusedEnding, false
			case try == reportTries || !errors.Is(err, work.ErrUnavailable) && !transient(err):
				return work.UpdateReceipt{}, updateRefusedUnavailable, true
			}
		}
	})
}

// awaitAnswer is the Remote.AwaitAnswer of an attempt: it holds the
// await-answer update of the Work's workflow open until the workflow
// answers (the question's timeout is the workflow's timer) or ctx ends
// (the child's context: a cancel, which the heartbeats bring meanwhile,
// or the deadline).
func (w *Worker) awaitAnswer(id string) func(ctx context.Context) bool {
	return func(ctx context.Context) bool {
		for ctx.Err() == nil {
			var answered bool
			err := update(ctx, w.c, id, updateAwait, &answered)
			if err == nil {
				return answered
			}
			if !transient(err) {
				return false
			}
			t := time.NewTimer(announceDelay)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
		return false
	}
}
