package temporal

import (
	"context"

	"github.com/agentwork/agentwork/work/observe"
)

var _ observe.Watched = (*Worker)(nil)

// Snapshot returns what this Worker runs now (observe.Watched), so that a
// worker process without an Engine exports its slots through the same
// telemetry Observer: for each registered target its running slots in use
// (attempts running or cancel-requested on this Worker: a cancel-requested
// one keeps its slot until its child returns; for a job target its
// submits in progress, not its polls) and its running limit
// (work.WithMaxRunning in WithOptions, per target: TargetCounts.MaxRunning; Snapshot.MaxRunning
// is 0), and each attempt as a live Work (cancel-requested from the moment
// its cancel arrived with a heartbeat, CancelAt then). Its state counts are
// zero: the deployment's Work by state is the Engine's (work.WithDeploymentGauges).
// It costs no call to Temporal; it is safe for concurrent use and fails
// only on a Worker not made by NewWorker (work.ErrNotInitialized).
func (w *Worker) Snapshot(context.Context) (observe.Snapshot, error) { return w.own().Census() }
