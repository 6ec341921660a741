package restate

import (
	"context"

	"github.com/agentwork/agentwork/work/observe"
)

var _ observe.Watched = (*Worker)(nil)

// Snapshot returns what this Worker runs now (observe.Watched): for each of
// its targets the running slots in use (attempts running or
// cancel-requested here; for a job target its submits in progress) and
// its per-target limit (TargetCounts.MaxRunning; Snapshot.MaxRunning is
// 0), and each attempt as a live Work (cancel-requested from the moment
// the cancel reached it). Its state counts are zero: a Worker sees only
// its own attempts. Start has an observe.Watcher Observer watch it, so that a
// worker process exports its slots. It makes no call to Restate, is safe
// for concurrent use and fails only on a Worker not made by NewWorker
// (work.ErrNotInitialized).
func (w *Worker) Snapshot(context.Context) (observe.Snapshot, error) { return w.own().Census() }
