package restate

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/agentwork/agentwork/work"
)

// slots are the attempts a Worker runs now, for its Snapshot: each holds
// one of its target's running slots (WithMaxRunning, per target) from its
// claim until its child returns. A job's submit is such an attempt; its
// polls are not (they run under the job's MaxPolls).
type slots struct {
	mu       sync.Mutex
	attempts map[*slot]struct{}
}

// slot is one attempt in progress. mu guards cancelAt and exec.
type slot struct {
	id, owner, label string
	kind             work.Kind
	depth, n         int
	created, started time.Time
	cancelAt         time.Time
	exec             *work.Execution
}

func (s *slots) add(a *slot) (remove func()) {
	s.mu.Lock()
	if s.attempts == nil {
		s.attempts = map[*slot]struct{}{}
	}
	s.attempts[a] = struct{}{}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.attempts, a)
		s.mu.Unlock()
	}
}

func (s *slots) set(a *slot, f func(*slot)) {
	s.mu.Lock()
	f(a)
	s.mu.Unlock()
}

var _ work.Watched = (*Worker)(nil)

// Snapshot returns what this Worker runs now (work.Watched): for each of
// its targets the running slots in use (attempts running or
// cancel-requested here; for a job target its submits in progress) and
// its per-target limit (TargetCounts.MaxRunning; Snapshot.MaxRunning is
// 0), and each attempt as a live Work (cancel-requested from the moment
// the cancel reached it). Its state counts are zero: a Worker sees only
// its own attempts. Start has a work.Watcher Observer watch it, so that a
// worker process exports its slots. It makes no call to Restate, is safe
// for concurrent use and never fails.
func (w *Worker) Snapshot(context.Context) (work.Snapshot, error) {
	snap := work.Snapshot{Time: time.Now()}
	used := map[string]int{}
	w.running.mu.Lock()
	for a := range w.running.attempts {
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
	w.running.mu.Unlock()
	for label := range w.targets {
		snap.Counts = append(snap.Counts, work.TargetCounts{Target: label, SlotsInUse: used[label], MaxRunning: max(w.cfg.maxRunning, 1)})
		snap.SlotsInUse += used[label]
	}
	sort.Slice(snap.Counts, func(i, j int) bool { return snap.Counts[i].Target < snap.Counts[j].Target })
	work.SortLive(snap.Live)
	return snap, nil
}
