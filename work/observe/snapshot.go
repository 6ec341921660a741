package observe

import (
	"context"
	"sort"
	"time"
)

// LiveWork is a content-free view of one live Work: queued, running or
// cancel-requested. It holds no input, output, guidance or failure text.
type LiveWork struct {
	ID       string
	Target   string // the target label
	Owner    string // the owner's id
	Depth    int    // the owner's nesting depth
	Kind     Kind
	State    State
	Detached bool
	Attempt  int       // always 1 in process
	Created  time.Time // when it was queued
	// Enqueued is when it joined the dispatch queue: Created, or when its
	// approval was given (work.Spec.NeedsApproval); zero while it awaits
	// approval. Queue ages (the oldest-queued gauges) count from it; an
	// work.Engine that leaves it zero for a queued Work not awaiting approval
	// has them count from Created.
	Enqueued time.Time
	Started  time.Time // when it started running; zero while queued
	// Lending reports that the Work waits on its own descendants and lends
	// its running slot to them meanwhile, or, its wait over, is owed its
	// slot back while a descendant still runs on it.
	Lending  bool
	Progress Progress // the child's progress counts so far
	// Waiting reports an external job between submit and result: it
	// holds no running slot.
	Waiting bool
	// AwaitingApproval reports a queued Work held for its approval: it
	// is not in the dispatch queue.
	AwaitingApproval bool
	// CancelAt is when the cancel request reached the Work, when the
	// engine knows it (a Temporal Worker: when the cancel arrived with a
	// heartbeat); zero otherwise (the Observer's own record, or Started,
	// stands in).
	CancelAt time.Time
}

// Snapshot is a point-in-time, content-free view of an engine's live
// Work, for operator pages and gauges.
type Snapshot struct {
	// Time is the engine's clock when the snapshot was taken.
	Time time.Time
	// MaxRunning is the running limit (work.WithMaxRunning) that every target
	// shares; 0 when the engine has none shared (its limits, if any, are
	// per target: TargetCounts.MaxRunning).
	MaxRunning int
	// Deployment reports figures of a whole deployment, read from a
	// durable engine's service (Temporal's visibility and task queues),
	// not of this process: exported by one process per deployment. Such a
	// Snapshot holds no slots, its Live is bounded (the newest Works per
	// target, the rest counted in LiveOmitted), its cancel-requested
	// Work counts as running (the workers that run it report it), and
	// TargetCounts.OldestQueued and Pollers are set.
	Deployment bool
	// LiveOmitted is how many live Works a Deployment snapshot leaves
	// out of Live.
	LiveOmitted int
	// SlotsInUse is how many of the MaxRunning slots are taken by running
	// and cancel-requested Work (a cancel-requested Work keeps its slot
	// until its child returns), except external jobs waiting for their
	// result (Waiting), which hold none: a job holds a slot only while its
	// Submit runs, and its polls run under a bound of their own. A Work
	// waiting on its own descendants lends its slot to them (see "Running
	// slots" in docs/engine.md): that slot counts once, not once per Work
	// of the chain.
	SlotsInUse int
	// Queued is how many Works wait for a slot (not those awaiting
	// approval, which are not in the dispatch queue).
	Queued int
	// Waiting is how many external jobs wait for their result (running,
	// holding no slot); AwaitingApproval how many queued Works wait for
	// their approval.
	Waiting, AwaitingApproval int
	// Live is every queued, running and cancel-requested Work (visible or
	// detached), oldest first.
	Live []LiveWork
	// Counts is, for every known target label, how many Works are in
	// each state (in the order of States; visible or detached, zero
	// included).
	Counts []TargetCounts
	// Pools is, for each budget (BudgetTurns, BudgetToolCalls,
	// BudgetTokens) that some owner's pool limits, the sums over those
	// pools of what unsettled children reserved and what remains.
	Pools []PoolTotal
}

// TargetCounts is how many Works of one target are in each state.
type TargetCounts struct {
	Target string
	Counts [len(States)]int
	// Waiting and AwaitingApproval count the target's waiting jobs and
	// Works awaiting approval (also counted in Counts as running and
	// queued); OldestApproval is when its oldest pending approval was
	// requested (zero for none).
	Waiting, AwaitingApproval int
	OldestApproval            time.Time
	// SlotsInUse is how many running slots the target's Work holds (of
	// Snapshot.SlotsInUse when the limit is shared; a slot lent down a
	// chain of Works counts for the target of the chain's first Work).
	SlotsInUse int
	// MaxRunning is the target's own running limit (a Temporal Worker's
	// per-target limit); 0 when the target shares Snapshot.MaxRunning.
	MaxRunning int
	// OldestQueued is the age of the target's oldest queued Work when the
	// engine measures it apart from Live (a Deployment snapshot: the
	// backlog age of the target's task queue); 0 otherwise.
	OldestQueued time.Duration
	// Pollers is how many worker processes poll the target's queue (a
	// Deployment snapshot only; 0 elsewhere).
	Pollers int
}

// PoolTotal is one budget's pool sums in a Snapshot.
type PoolTotal struct {
	Budget              string
	Reserved, Remaining int64
}

// Watched is what gauges and status pages read of an engine when they
// collect: a content-free Snapshot of its live Work, slots, per-target
// state counts and pools. The work.Engine implements it; a Watcher watches
// any Watched. Snapshot must be safe for concurrent use and quick (it runs
// at every metric collection).
type Watched interface {
	Snapshot(ctx context.Context) (Snapshot, error)
}

// SortLive puts live Work in a Snapshot's order: oldest first (by
// Created), then by id.
func SortLive(live []LiveWork) {
	sort.Slice(live, func(i, j int) bool {
		a, b := live[i], live[j]
		if !a.Created.Equal(b.Created) {
			return a.Created.Before(b.Created)
		}
		return a.ID < b.ID
	})
}
