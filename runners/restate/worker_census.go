package restate

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/agentwork/agentwork/work"
)

// attempts are the attempts a Worker runs now, for its Snapshot: each
// from its claim until its child returns.
type attempts struct {
	mu      sync.Mutex
	live    map[*liveAttempt]struct{}
	unwatch func()
}

// liveAttempt is one attempt in progress on this Worker. Only the
// attempts' mu guards cancelAt and exec; the rest is fixed.
type liveAttempt struct {
	in       workInput // its Input is not read here
	n        int
	started  time.Time
	cancelAt time.Time // when the cancel reached the attempt; zero before
	exec     *work.Execution
}

// add records an attempt of in (attempt n) and returns it.
func (s *attempts) add(in workInput, n int) *liveAttempt {
	a := &liveAttempt{in: in, n: n, started: time.Now()}
	s.mu.Lock()
	if s.live == nil {
		s.live = map[*liveAttempt]struct{}{}
	}
	s.live[a] = struct{}{}
	s.mu.Unlock()
	return a
}

func (s *attempts) remove(a *liveAttempt) {
	s.mu.Lock()
	delete(s.live, a)
	s.mu.Unlock()
}

// cancelled records when the cancel first reached a.
func (s *attempts) cancelled(a *liveAttempt) {
	s.mu.Lock()
	if a.cancelAt.IsZero() {
		a.cancelAt = time.Now()
	}
	s.mu.Unlock()
}

// running records a's Execution (its progress counts).
func (s *attempts) running(a *liveAttempt, ex *work.Execution) {
	s.mu.Lock()
	a.exec = ex
	s.mu.Unlock()
}

var _ work.Watched = (*Worker)(nil)

// Snapshot returns what this Worker runs now (work.Watched), so that a
// worker process without an Engine exports its slots through the same
// telemetry Observer: for each of its targets the running slots in use
// (WithMaxRunning, per target: TargetCounts.MaxRunning; Snapshot.MaxRunning
// is 0; a slot is taken from before the attempt's claim until its child
// returns, a cancel-requested attempt keeping it), and each attempt as a
// live Work (cancel-requested from the moment the cancel reached it,
// CancelAt then, with its progress so far). Its state counts are zero:
// the deployment's Work by state is the Engine's (WithDeploymentGauges).
// It costs no call to Restate; it is safe for concurrent use and never
// fails.
func (w *Worker) Snapshot(context.Context) (work.Snapshot, error) {
	snap := work.Snapshot{Time: time.Now()}
	w.live.mu.Lock()
	for a := range w.live.live {
		lw := work.LiveWork{ID: a.in.ID, Target: a.in.Label, Owner: a.in.Owner, Depth: a.in.Depth, Kind: a.in.Kind,
			State: work.StateRunning, Attempt: a.n, Created: a.in.Created, Started: a.started, CancelAt: a.cancelAt}
		if !a.cancelAt.IsZero() {
			lw.State = work.StateCancelRequested
		}
		if a.exec != nil {
			lw.Progress = a.exec.Progress()
		}
		snap.Live = append(snap.Live, lw)
	}
	w.live.mu.Unlock()
	for label, slot := range w.slots {
		n := len(slot)
		snap.Counts = append(snap.Counts, work.TargetCounts{Target: label, SlotsInUse: n, MaxRunning: cap(slot)})
		snap.SlotsInUse += n
	}
	sort.Slice(snap.Counts, func(i, j int) bool { return snap.Counts[i].Target < snap.Counts[j].Target })
	work.SortLive(snap.Live)
	return snap, nil
}

// watchSlots has the Observer, when it is a work.Watcher, watch the Worker
// until unwatchSlots.
func (w *Worker) watchSlots() {
	wt, ok := w.cfg.observer.(work.Watcher)
	if !ok {
		return
	}
	unwatch := wt.Watch(w)
	w.live.mu.Lock()
	prev := w.live.unwatch
	w.live.unwatch = unwatch
	w.live.mu.Unlock()
	if prev != nil {
		prev()
	}
}

func (w *Worker) unwatchSlots() {
	w.live.mu.Lock()
	unwatch := w.live.unwatch
	w.live.unwatch = nil
	w.live.mu.Unlock()
	if unwatch != nil {
		unwatch()
	}
}
