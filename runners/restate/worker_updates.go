package restate

import (
	"context"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// reportUpdate is the attempt's driver.Remote.Update: the Work's control
// object decides (and reports the decision); what it cannot be asked
// (no updates declared, the call failed) is refused here, with its event.
func (w *Worker) reportUpdate(in workInput) func(key string, value []byte, question bool) (work.UpdateReceipt, string) {
	a := driver.Attempt{ID: in.ID, Owner: in.Owner, Depth: in.Depth, Label: in.Label, Kind: in.Kind}
	return driver.ReportUpdates(w.cfg.Limits.Observer, a, in.Updates != nil, func(key string, value []byte, question bool) (work.UpdateReceipt, string, bool) {
		sealed, err := w.cfg.ring.sealBytes(in.ID, fieldUpdate, value) // WithContentKeys
		if err != nil {
			w.contentError(in.ID, err)
			return work.UpdateReceipt{}, observe.UpdateRefusedUnavailable, true
		}
		ctx, cancel := context.WithTimeout(context.Background(), w.cfg.RPCTimeout)
		defer cancel()
		// Idempotent by its key in the log: a repeat after a lost answer
		// gets the first receipt (Duplicate).
		var r driver.UpdateReportReply
		if err := w.in.object(ctx, controlService, in.ID, hReport, "", driver.UpdateReport{Key: key, Value: sealed, Question: question}, &r); err != nil {
			return work.UpdateReceipt{}, observe.UpdateRefusedUnavailable, true
		}
		return work.UpdateReceipt{Seq: r.Seq, Duplicate: r.Duplicate}, r.Reason, false
	})
}

// awaitAnswer is the attempt's driver.Remote.AwaitAnswer: it reads the
// Work's open questions every poll interval until guidance answered them
// (true), their deadline passed (false; the control object closes them),
// the Work ended or ctx is done.
func (w *Worker) awaitAnswer(id string) func(ctx context.Context) bool {
	return func(ctx context.Context) bool {
		var q0 questionView
		if err := w.in.object(ctx, controlService, id, hQuestion, "", nil, &q0); err != nil || q0.Ended {
			return false
		}
		if !q0.Open {
			return q0.Answered
		}
		tick := time.NewTicker(w.cfg.PollInterval)
		defer tick.Stop()
		for {
			deadline := time.NewTimer(time.Until(q0.Deadline))
			select {
			case <-ctx.Done():
				deadline.Stop()
				return false
			case <-deadline.C:
				var answered bool
				tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.RPCTimeout)
				err := w.in.object(tctx, controlService, id, hQTimedOut, "", q0.Gen, &answered)
				cancel()
				return err == nil && answered
			case <-tick.C:
			}
			deadline.Stop()
			var q questionView
			if err := w.in.object(ctx, controlService, id, hQuestion, "", nil, &q); err != nil {
				continue
			}
			switch {
			case q.Gen != q0.Gen:
				return q.Answered
			case q.Ended:
				return false
			}
		}
	}
}
