package driver

import (
	"sort"
	"sync"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// Slots are the attempts a durable Worker runs now, for its Snapshot:
// each holds one of its target's running slots from the moment the
// Worker takes it until its child returns. An external job's submit is
// such an attempt; its polls are not. The zero value has none; it is safe
// for concurrent use.
type Slots struct {
	mu       sync.Mutex
	attempts map[*Attempt]struct{}
	// labels and maxRunning are the Worker's targets and running limit
	// (NewSlots), which Census reports.
	labels     []string
	maxRunning int
}

// NewSlots returns the Slots of a Worker whose targets are labels, each
// under the running limit maxRunning.
func NewSlots(labels []string, maxRunning int) *Slots {
	return &Slots{labels: labels, maxRunning: maxRunning}
}

// Census is a runner Worker's Snapshot (observe.Watched): Snapshot of the
// labels and limit NewSlots was given; work.ErrNotInitialized for nil
// Slots (a Worker not made by its NewWorker).
func (s *Slots) Census() (observe.Snapshot, error) {
	if s == nil {
		return observe.Snapshot{}, work.ErrNotInitialized
	}
	return s.Snapshot(s.labels, s.maxRunning), nil
}

// Attempt is one attempt in progress on a Worker. Its fields are fixed
// once it is added, but for what Cancelled and Running set.
type Attempt struct {
	ID, Owner, Label string
	Kind             observe.Kind
	Depth, N         int // N: the attempt's number, from 1
	Created, Started time.Time
	cancelAt         time.Time // when the cancel reached it; zero before
	exec             *work.Execution
}

// Add records a and returns the function that removes it.
func (s *Slots) Add(a *Attempt) (remove func()) {
	s.mu.Lock()
	if s.attempts == nil {
		s.attempts = map[*Attempt]struct{}{}
	}
	s.attempts[a] = struct{}{}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.attempts, a)
		s.mu.Unlock()
	}
}

// Cancelled records when the cancel reached a (the first time only).
func (s *Slots) Cancelled(a *Attempt, at time.Time) {
	s.mu.Lock()
	if a.cancelAt.IsZero() {
		a.cancelAt = at
	}
	s.mu.Unlock()
}

// Running records a's Execution, whose progress counts the Snapshot reads.
func (s *Slots) Running(a *Attempt, ex *work.Execution) {
	s.mu.Lock()
	a.exec = ex
	s.mu.Unlock()
}

// Snapshot is what the Worker runs now (observe.Watched): for each of its
// target labels the slots in use and its limit maxRunning
// (TargetCounts.MaxRunning; Snapshot.MaxRunning is 0), sorted by target,
// and each attempt as a live Work, cancel-requested from the moment the
// cancel reached it, with its progress. Its state counts are zero: a
// Worker sees only its own attempts.
func (s *Slots) Snapshot(labels []string, maxRunning int) observe.Snapshot {
	snap := observe.Snapshot{Time: time.Now()}
	used := map[string]int{}
	s.mu.Lock()
	for a := range s.attempts {
		used[a.Label]++
		lw := observe.LiveWork{ID: a.ID, Target: a.Label, Owner: a.Owner, Depth: a.Depth, Kind: a.Kind,
			State: work.StateRunning, Attempt: a.N, Created: a.Created, Started: a.Started, CancelAt: a.cancelAt}
		if !a.cancelAt.IsZero() {
			lw.State = work.StateCancelRequested
		}
		if a.exec != nil {
			lw.Progress = a.exec.Progress()
		}
		snap.Live = append(snap.Live, lw)
	}
	s.mu.Unlock()
	for _, label := range labels {
		snap.Counts = append(snap.Counts, observe.TargetCounts{Target: label, SlotsInUse: used[label], MaxRunning: maxRunning})
		snap.SlotsInUse += used[label]
	}
	sort.Slice(snap.Counts, func(i, j int) bool { return snap.Counts[i].Target < snap.Counts[j].Target })
	observe.SortLive(snap.Live)
	return snap
}
