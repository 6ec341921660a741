package temporal

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/agentwork/agentwork/work"
)

// slots are the attempts a Worker runs now, for its Snapshot: each holds
// one of its target's running slots (WithMaxRunning, per target) from the
// moment the Worker picks it up until its child returns. An external
// job's submit is such an attempt; its polls and its cancel are not (they
// run on the target's poll queue, under the job's MaxPolls).
type slots struct {
	mu       sync.Mutex
	attempts map[*attempt]struct{}
	unwatch  func()
}

// attempt is one attempt in progress on this Worker. Only mu guards
// cancelAt and exec; the rest is fixed.
type attempt struct {
	id, owner, label string
	kind             work.Kind
	depth, n         int
	created, started time.Time
	cancelAt         time.Time // when the cancel arrived (ctx done); zero before
	exec             *work.Execution
}

// add records an attempt and returns the function that removes it.
func (s *slots) add(a *attempt) (remove func()) {
	s.mu.Lock()
	if s.attempts == nil {
		s.attempts = map[*attempt]struct{}{}
	}
	s.attempts[a] = struct{}{}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.attempts, a)
		s.mu.Unlock()
	}
}

// cancelled records when the cancel reached a.
func (s *slots) cancelled(a *attempt, at time.Time) {
	s.mu.Lock()
	a.cancelAt = at
	s.mu.Unlock()
}

// started records a's Execution (its progress counts).
func (s *slots) running(a *attempt, ex *work.Execution) {
	s.mu.Lock()
	a.exec = ex
	s.mu.Unlock()
}

var _ work.Watched = (*Worker)(nil)

// Snapshot returns what this Worker runs now (work.Watched), so that a
// worker process without an Engine exports its slots through the same
// telemetry Observer: for each registered target its running slots in use
// (attempts running or cancel-requested on this Worker: a cancel-requested
// one keeps its slot until its child returns; for a job target its
// submits in progress, not its polls) and its running limit
// (WithMaxRunning, per target: TargetCounts.MaxRunning; Snapshot.MaxRunning
// is 0), and each attempt as a live Work (cancel-requested from the moment
// its cancel arrived with a heartbeat, CancelAt then). Its state counts are
// zero: the deployment's Work by state is the Engine's (WithDeploymentGauges).
// It costs no call to Temporal; it is safe for concurrent use and never
// fails.
func (w *Worker) Snapshot(context.Context) (work.Snapshot, error) {
	now := time.Now()
	snap := work.Snapshot{Time: now}
	used := map[string]int{}
	w.slots.mu.Lock()
	for a := range w.slots.attempts {
		used[a.label]++
		lw := work.LiveWork{ID: a.id, Target: a.label, Owner: a.owner, Depth: a.depth, Kind: a.kind,
			State: work.StateRunning, Attempt: a.n, Created: a.created, Started: a.started, CancelAt: a.cancelAt}
		if !a.cancelAt.IsZero() {
			lw.State = work.StateCancelRequested
		}
		if a.exec != nil {
			lw.Progress = a.exec.Progress()
		}
		snap.Live = append(snap.Live, lw)
	}
	w.slots.mu.Unlock()
	for label := range w.targets {
		snap.Counts = append(snap.Counts, work.TargetCounts{Target: label, SlotsInUse: used[label], MaxRunning: w.cfg.maxRunning})
		snap.SlotsInUse += used[label]
	}
	sort.Slice(snap.Counts, func(i, j int) bool { return snap.Counts[i].Target < snap.Counts[j].Target })
	work.SortLive(snap.Live)
	return snap, nil
}
