package temporal

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// workErr is e as an update's failure; details (content-free, such as a
// limit's name) travel with it. fromTemporal decodes it.
func workErr(e *work.Error, details ...any) error {
	return temporal.NewApplicationError(e.Error(), errTypePrefix+e.Code, details...)
}

var errWorkflowClosed = errors.New("temporal: workflow closed")

// fromTemporal maps Temporal's errors to the engine's.
func fromTemporal(err error) error {
	if err == nil {
		return nil
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) && strings.HasPrefix(app.Type(), errTypePrefix) {
		if we, ok := driver.DecodeError(strings.TrimPrefix(app.Type(), errTypePrefix), app.Message()); ok {
			return we
		}
	}
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		// The server answers an update to a Work workflow that closed
		// after the owner's registry was read (or while the update was
		// in flight) with NotFound too: that Work is terminal, not
		// unknown. Its callers read its terminal state instead.
		if slices.Contains(closedMessages, nf.Message) {
			return errWorkflowClosed
		}
		return work.ErrNotFound
	}
	if !isServiceError(err) && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return err // the caller's context ended: its error, as is
	}
	// A transport or server error the contract does not name: the cause
	// stays reachable (errors.As to a serviceerror type).
	return driver.Wrap(work.ErrUnavailable, err)
}

// isServiceError reports whether err is (or wraps) the server's answer.
func isServiceError(err error) bool {
	var se serviceerror.ServiceError
	return errors.As(err, &se)
}

// closedMessages are the server's NotFound messages for an update to a
// closed workflow (go.temporal.io/server: consts.ErrWorkflowCompleted and
// update.AbortedByWorkflowClosingErr).
var closedMessages = []string{"workflow execution already completed", "workflow update was aborted by closing workflow"}

// tries bounds the tries of a call to Temporal that is safe to repeat
// (a query, or an update its handler applies once) made for a caller.
const tries = 3

// retry calls f, each call bounded by the RPC timeout d within ctx, until
// it succeeds, its error is not transient, ctx ends or it has been tried
// n times (n <= 0: no bound but ctx); it returns f's last error. A call
// cut off by a stalled server (its in-flight update limit, a task that a
// dead worker held) is tried again rather than failing what called it,
// after a pause of 100 ms doubling to 2 s.
func retry(ctx context.Context, d time.Duration, n int, f func(ctx context.Context) error) error {
	return retryWhile(ctx, ctx, d, n, f)
}

// retryWhile is retry whose calls run on ctx but whose retries stop once
// caller ended: a call in flight is not abandoned (it may take effect on
// the server), no new one starts for a caller that gave up.
func retryWhile(caller, ctx context.Context, d time.Duration, n int, f func(ctx context.Context) error) error {
	pause := 100 * time.Millisecond
	for try := 1; ; try++ {
		cctx, cancel := context.WithTimeout(ctx, d)
		err := f(cctx)
		cancel()
		if err == nil || try == n || !transient(err) || ctx.Err() != nil || caller.Err() != nil {
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-caller.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		pause = min(2*pause, 2*time.Second)
	}
}

// transient reports whether err is a call that was cut off (cancelled,
// timed out, unavailable) rather than an answer.
func transient(err error) bool {
	var (
		canceled *serviceerror.Canceled
		deadline *serviceerror.DeadlineExceeded
		unavail  *serviceerror.Unavailable
	)
	return errors.As(err, &canceled) || errors.As(err, &deadline) || errors.As(err, &unavail) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}
