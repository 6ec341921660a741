package driver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// errDeadline is the cause a durable attempt's child context is cancelled
// with when its Work's maximum duration passes (AttemptContext).
var errDeadline = fmt.Errorf("agentwork: maximum duration reached: %w", context.DeadlineExceeded)

// AttemptContext returns the context a durable attempt runs its child (or
// a job's submit) in: base's values without its cancellation, cancelled
// with parent's cause when parent ends, and with a cause of its own
// (which Classify and Submit recognise) once maxDuration (when positive)
// has passed. stop releases what it holds; the caller calls it, then
// cancel, when the child has returned.
func AttemptContext(base, parent context.Context, maxDuration time.Duration) (ctx context.Context, cancel context.CancelCauseFunc, stop func()) {
	ctx, cancel = context.WithCancelCause(context.WithoutCancel(base))
	stopCut := context.AfterFunc(parent, func() { cancel(context.Cause(parent)) })
	var timer *time.Timer
	if maxDuration > 0 {
		timer = time.AfterFunc(maxDuration, func() { cancel(errDeadline) })
	}
	return ctx, cancel, func() {
		stopCut()
		if timer != nil {
			timer.Stop()
		}
	}
}

// invoke runs call and reports a panic in it as panicked (with call's
// results zero) instead of letting it unwind the attempt.
func invoke[T any](call func() (T, error)) (out T, err error, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			var zero T
			out, err, panicked = zero, nil, true
		}
	}()
	out, err = call()
	return out, err, false
}

// Outcome is a child's return as a durable attempt reports it: a class,
// never the failure's text.
type Outcome struct {
	Class    string // "" when the child completed
	Bytes    int    // the output's size (also of an output too large)
	Budget   string // the budget that ran out, if one did
	Usage    observe.Usage
	Progress observe.Progress
}

// Classify maps a child's return to its Outcome, as the in-process engine
// does: a panic; the maximum duration (AttemptContext's cause, the
// duration budget named when no other ran out first); a cancel the Work
// asked for (cancelled) that the child returned as context.Canceled; an
// error after a budget refused a request; any other error; an output over
// maxResultBytes (when positive); else completed. ex is the child's
// Execution (nil: no usage or progress known).
func Classify(child context.Context, cancelled bool, maxResultBytes int, out string, err error, panicked bool, ex *work.Execution) Outcome {
	o := Outcome{Usage: ex.Usage(), Progress: ex.Progress()}
	var refused bool
	o.Budget, refused = exhausted(ex)
	switch {
	case panicked:
		o.Class = work.ClassPanic
	case errors.Is(context.Cause(child), errDeadline):
		o.Class = work.ClassDeadline
		if o.Budget == "" {
			o.Budget = observe.BudgetDuration
		}
	case err != nil && cancelled && errors.Is(err, context.Canceled):
		o.Class = work.ClassCancelled
	case err != nil && refused:
		o.Class = work.ClassBudgetExhausted
	case err != nil:
		o.Class = work.ClassError
	case maxResultBytes > 0 && len(out) > maxResultBytes:
		o.Class, o.Bytes = work.ClassResultTooLarge, len(out)
	default:
		o.Bytes = len(out)
	}
	return o
}
