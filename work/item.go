package work

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentwork/agentwork/work/observe"
)

type item struct {
	s         *Engine // the in-process engine that runs it
	owner     *ownerState
	target    Target
	seq       uint64
	created   time.Time
	started   time.Time
	finished  time.Time
	output    string
	st        stateIdx // its State, States[st] (zero: queued)
	hasOutput bool
	listed    bool // in its owner's items (until detached or evicted)
	read      bool
	detached  bool
	lending   bool            // a waiter of this Work lends its running slot (slots.go)
	emitHeld  bool            // runLocked took emitMu for the emission under way (emission.go)
	class     termClass       // the terminal class (Status.Class, the terminal event's ErrorClass), set as it settles
	waiters   *waiter         // those waiting for it to settle (waiter.go), woken after its terminal events
	ctx       context.Context // from Observer.Bind; events use it
	run       RunFunc         // nil once running
	cancel    context.CancelCauseFunc
	stopTimer func() bool // the deadline's, on a Clock other than the system's
	maxBytes  int
	// prev and next link the Work into list: its owner's queue, the
	// engine's running list or its owner's terminal list (ilist.go).
	prev, next *item
	list       *itemList
	mb         *mailbox // guidance and command records, from the first Send
	sc         *scope   // this Work's own owner scope, from running
	// Running slots (slots.go): its part in lending slots (nil until it
	// takes part; lendState), whether it is owed its slot back (mirrors
	// lend.reclaim != nil for the lock-free boundary check), whether code
	// on its slot has used the model-request boundary, and how many Works
	// are queued below this one.
	lend        *lendState
	reclaiming  atomic.Bool
	boundary    atomic.Bool
	queuedBelow int32
	dlIdx       int32 // 1 + its index in the deadline heap; 0 when not in it
	emitMu      sync.Mutex
	brun        run // its budget state
	prog        progress
	scopeID     string                    // the id of the Work's own scope: owner id + "/" + Work id (id)
	counts      *[len(observe.States)]int // the census of its target label
	exec        Execution                 // its child's, from running
	xctx        execCtx                   // its child's context, from running
	scope       scope                     // its own owner scope (sc points here), from running
	ap          *approval                 // its approval request, for a Spec with NeedsApproval (approval.go)
	job         *jobWait                  // an external job's state (Spec.Job, job.go) until it settles
	upd         *updates                  // its updates, for a Spec that declares them (update_work.go); set at Start
}

// lendState is a Work's part in lending running slots (slots.go), made
// the first time it takes part (most Works never do); guarded by the
// engine's lock. lender is the Work whose lent slot this one runs on
// (nil: a pool slot), borrower the descendant running on this one's lent
// slot, awaited the Works its lending waiters wait for (one entry per
// waiter), reclaim the channel closed when this Work, owed its slot back,
// has one again.
type lendState struct {
	lender, borrower *item
	awaited          []*item
	reclaim          chan struct{}
}

// lending returns its lendState, making it.
func (it *item) lendSt() *lendState {
	if it.lend == nil {
		it.lend = new(lendState)
	}
	return it.lend
}

// lender returns the Work whose lent slot it runs on, nil on a pool slot.
func (it *item) lender() *item {
	if it.lend == nil {
		return nil
	}
	return it.lend.lender
}

// borrower returns the Work running on its lent slot, if any.
func (it *item) borrower() *item {
	if it.lend == nil {
		return nil
	}
	return it.lend.borrower
}

// reclaim returns the channel closed when it, owed its slot back, has one
// again; nil when it is not owed one.
func (it *item) reclaim() chan struct{} {
	if it.lend == nil {
		return nil
	}
	return it.lend.reclaim
}

// stateIdx is a State's index in States.
type stateIdx uint8

// state returns its State.
func (it *item) state() observe.State { return observe.States[it.st] }

// terminal reports whether its State is terminal.
func (it *item) terminal() bool { return stateTerminal[it.st] }

// id returns the Work's id: the end of its scope's id.
func (it *item) id() string { return it.scopeID[len(it.scopeID)-idLen:] }

// The Work is its child's runtime (childRuntime): the Execution's
// workID, ownScope and budgetRun are here, its other methods with their
// concerns (send.go, progress_events.go, budget_events.go,
// update_work.go, slots.go).

// workID returns the Work's id.
func (it *item) workID() string { return it.id() }

// ownScope returns the child's own owner scope, one level below the
// Work's owner.
func (it *item) ownScope() Owner {
	return Owner{id: it.scopeID, depth: it.owner.depth + 1, sc: it.sc}
}

// budgetRun returns the Work's budget state.
func (it *item) budgetRun() *run { return &it.brun }

// ref returns the Work's Ref.
func (it *item) ref() Ref { return Ref{ID: it.id(), TargetID: it.target.id()} }

// maxDur returns its effective duration limit (0: none).
func (it *item) maxDur() time.Duration { return it.brun.maxDur }

// cancelRun cancels the context of running it with cause: an external
// job's own (it.cancel, job.go), else its child's.
func (it *item) cancelRun(cause error) {
	if it.cancel != nil {
		it.cancel(cause)
		return
	}
	it.xctx.cancel(cause)
}
