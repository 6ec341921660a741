package boundary

import (
	"context"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/internal/seam"
	"github.com/agentwork/agentwork/work/observe"
)

// MaxRows is the most rows Rows returns.
const MaxRows = 12

// The engine's reads, as work gives them (package seam); their types are
// checked once, here, as the package initialises.
var (
	readRows = seam.Rows.(func(*work.Engine, context.Context, work.Owner) ([]observe.Row, int, error))
	settled  = seam.Settled.(func(*work.Engine, context.Context, work.Owner) ([]work.Status, error))
	live     = seam.Live.(func(*work.Engine, context.Context, work.Owner) (bool, error))
	now      = seam.Now.(func(*work.Engine) time.Time)
	observer = seam.Observer.(func(*work.Engine) observe.Observer)
)

// Rows returns the status block's rows for o on e: at most MaxRows Works
// chosen by priority, and how many visible Works were left out. The
// priority is: results available and not yet read; failed; running and
// cancel-requested; queued; the rest (results already read, cancelled).
// Within a priority, newest first. Elapsed is measured from start (or
// creation while queued) to now, or to the finish for terminal Work. On
// the in-process engine selection costs O(n log MaxRows) for n visible
// Works: it does not sort them. Rows of the zero Owner is nothing and no
// error; its error is work.ErrNotInitialized for an Engine made by
// neither work.New nor a runner (nil or zero), work.ErrUnavailable when a
// durable engine's service does not answer, and nil otherwise.
func Rows(ctx context.Context, e *work.Engine, o work.Owner) (rows []observe.Row, more int, err error) {
	return readRows(e, ctx, o)
}

// Settled returns every Work visible to o on e that is terminal, oldest
// settlement first, with no limit on their number (unlike work.Engine's
// List): what a Subscription's reader reads after a wake-up so that it
// misses none. The visible terminal Works are bounded by the retention
// (work.WithRetention). It returns an empty slice for an owner with none.
// Its errors are those of Live.
func Settled(ctx context.Context, e *work.Engine, o work.Owner) ([]work.Status, error) {
	return settled(e, ctx, o)
}

// Live reports whether o has visible Work on e that is not terminal. Its
// error is work.ErrNotInitialized for an Engine made by neither work.New
// nor a runner, work.ErrInvalidOwner for the zero Owner and
// work.ErrUnavailable when a durable engine's service does not answer;
// otherwise it is nil.
func Live(ctx context.Context, e *work.Engine, o work.Owner) (bool, error) {
	return live(e, ctx, o)
}

// Now returns e's clock's current time (work.WithClock; the zero time for
// an Engine made by neither work.New nor a runner), so that layers above
// the engine time their events as it does.
func Now(e *work.Engine) time.Time { return now(e) }

// Observer returns e's Observer (work.WithObserver; observe.NopObserver
// when none was set, and for an Engine made by neither work.New nor a
// runner), so that layers above the engine report through the same seam.
func Observer(e *work.Engine) observe.Observer { return observer(e) }

// IsID reports whether s has the form of a Work id: 32 lowercase hex
// digits. Layers above the engine use it to keep other strings (which may
// be model-written content) out of telemetry.
func IsID(s string) bool { return contract.IsID(s) }
