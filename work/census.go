package work

import (
	"context"

	"github.com/agentwork/agentwork/work/observe"
)

var _ observe.Watched = (*Engine)(nil)

// Snapshot returns the live Work, slot usage, per-target state counts and
// pool sums (observe.Watched), which the in-process engine reads under its
// lock. It costs O(live Work + targets + pools) and allocates the lists;
// it never returns content. Its error is ErrNotInitialized for an Engine
// made by neither work.New nor a runner (with the zero Snapshot); the
// in-process engine's is nil otherwise.
func (s *Engine) Snapshot(ctx context.Context) (observe.Snapshot, error) {
	if s != nil && s.impl != nil {
		return s.impl.Snapshot(ctx)
	}
	if s.uninitialized() {
		return observe.Snapshot{}, ErrNotInitialized
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := observe.Snapshot{Time: s.clock.Now(), MaxRunning: s.lim.MaxRunning, SlotsInUse: s.used}
	// A pool slot is held by one running Work with no lender (for itself
	// or lent down its chain): it counts for that Work's target. An
	// external job waiting for its result is running but holds none.
	var slots map[string]int
	for it := s.running.front(); it != nil; it = it.next {
		if it.lender() == nil && (it.job == nil || !it.job.waiting) {
			if slots == nil {
				slots = map[string]int{}
			}
			slots[it.target.Label]++
		}
	}
	if n := len(s.counts) + len(s.lim.DeploymentTargets); n > 0 {
		snap.Counts = make([]observe.TargetCounts, 0, n)
		for label, c := range s.counts {
			snap.Counts = append(snap.Counts, observe.TargetCounts{Target: label, Counts: *c, SlotsInUse: slots[label]})
		}
		// Targets named by WithDeploymentGauges show before their first Work.
		for _, label := range s.lim.DeploymentTargets {
			if _, ok := s.counts[label]; !ok {
				snap.Counts = append(snap.Counts, observe.TargetCounts{Target: label})
			}
		}
	}
	s.poolTotalsLocked(func(budget string, reserved, remaining int64) {
		snap.Pools = append(snap.Pools, observe.PoolTotal{Budget: budget, Reserved: reserved, Remaining: remaining})
	})
	for it := s.running.front(); it != nil; it = it.next {
		lw := it.live()
		if lw.Waiting {
			snap.Waiting++
			countWaiting(snap.Counts, lw.Target)
		}
		snap.Live = append(snap.Live, lw)
	}
	for os := s.ready.front(); os != nil; os = os.rnext {
		for q := os.queue.front(); q != nil; q = q.next {
			snap.Live = append(snap.Live, q.live())
			snap.Queued++
		}
	}
	s.heldSnapshotLocked(&snap)
	observe.SortLive(snap.Live)
	return snap, nil
}

func (it *item) live() observe.LiveWork {
	return observe.LiveWork{ID: it.id(), Target: it.target.Label, Owner: it.owner.id, Depth: it.owner.depth,
		Kind: it.target.Kind, State: it.state(), Detached: it.detached, Attempt: 1,
		Created: it.created, Started: it.started, Lending: it.lending || it.reclaim() != nil,
		Progress: it.prog.snapshot(), Enqueued: it.enqueued(), AwaitingApproval: it.awaiting(),
		Waiting: it.job != nil && it.job.waiting}
}

// countWaiting counts one waiting job of target in cs.
func countWaiting(cs []observe.TargetCounts, target string) {
	for i := range cs {
		if cs[i].Target == target {
			cs[i].Waiting++
			return
		}
	}
}
