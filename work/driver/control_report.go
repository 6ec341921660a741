package driver

import (
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// ReportUpdates returns the Remote.Update of an attempt of Work a,
// reporting to obs. A Work whose Spec declares no updates (declared
// false) refuses each with observe.UpdateRefusedNotDeclared, without a call.
// Every other update goes to report, the runner's call to the Work's own
// state, which decides it and reports its EventUpdate. A refusal report
// returns with here true was decided in the attempt instead (the call
// failed, or the runner refused the update before the Work's state saw
// it): its EventUpdate is reported to obs, as UpdateRefused does. A nil
// report refuses each declared update with observe.UpdateRefusedUnavailable
// (nothing could record it), with its event.
func ReportUpdates(obs observe.Observer, a Attempt, declared bool, report func(key string, value []byte, question bool) (rec work.UpdateReceipt, reason string, here bool)) func(key string, value []byte, question bool) (work.UpdateReceipt, string) {
	return func(key string, value []byte, question bool) (work.UpdateReceipt, string) {
		if !declared {
			return UpdateRefused(obs, a, len(value), question, observe.UpdateRefusedNotDeclared)
		}
		if report == nil {
			return UpdateRefused(obs, a, len(value), question, observe.UpdateRefusedUnavailable)
		}
		rec, reason, here := report(key, value, question)
		if here && reason != "" {
			return UpdateRefused(obs, a, len(value), question, reason)
		}
		return rec, reason
	}
}
