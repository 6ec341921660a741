package work

import (
	"context"
	"encoding/binary"
	"fmt"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentwork/agentwork/work/internal/limit"
	"github.com/agentwork/agentwork/work/observe"
)

// The causes a child's context is cancelled with (context.Cause). The two
// cancellations wrap context.Canceled, so that a child returning
// context.Cause(ctx) is treated like one returning ctx.Err().
var (
	errCancelRequested = fmt.Errorf("work: cancel requested: %w", context.Canceled)
	errClosed          = fmt.Errorf("work: engine closed: %w", context.Canceled)
	errDeadline        = fmt.Errorf("work: maximum duration reached: %w", context.DeadlineExceeded)
)

// Engine is where Work runs and is recorded: what applications and the
// model-facing layers (the middleware, the adapters) use. New makes the
// in-process Engine; a durable runner (runners/temporal, runners/restate)
// makes one whose Work runs on its service. Every Engine keeps the same
// contract, which the conformance suite in package work/enginetest checks
// on each.
//
// The contract, for every implementation:
//
//   - Every method is safe for concurrent use. Every method that can fail
//     or block takes the caller's ctx first and returns an error: an
//     implementation that talks to a remote service bounds each call by
//     ctx (and may cap it with its own timeout), except where abandoning
//     a call could leave it half done (runners/temporal's Start, bounded
//     by its timeout alone, documents this). The in-process Engine
//     answers every method but Start, Call and Result from memory and
//     ignores its ctx there.
//   - Owners are isolated: an id that is unknown, or that belongs to another
//     owner (or was detached from this one), is ErrNotFound for every
//     per-Work method. The zero Owner is ErrInvalidOwner (work/boundary's
//     Rows returns nothing and Release does nothing for it, with no error).
//   - Start admits Work atomically against the owner's limits (outstanding,
//     starts, depth) and returns its Ref at once; the child runs later. On
//     failure (ErrInvalidOwner, ErrInvalidSpec, ErrClosed, ErrScopeEnded,
//     ErrLimit) nothing is registered. ctx is the caller's: none of its
//     values or its cancellation reach the child.
//   - Call runs a child in the foreground and returns its exact output;
//     failures are ErrChildFailed (with a Class; result_too_large for an
//     output over the result-byte limit, which applies as to background
//     Work), ErrCancelled or ErrClosed, and admission fails as for Start.
//   - States move only along the lifecycle's edges: queued, running,
//     cancel-requested, then exactly one of completed, failed, cancelled.
//   - Status and List return result-free projections; List returns at most
//     50, unfinished first, then finished, newest first within each
//     group, and an empty (non-nil) slice for an owner with none.
//   - work/boundary's Rows returns at most 12 status-block rows in
//     priority order (unread results, failed, running and cancel-requested, queued, the
//     rest; newest first within each) and how many visible Works it left
//     out. It never carries output or failure text. Its error is non-nil
//     only when the rows cannot be read (e.g. a remote registry that does
//     not answer).
//   - Result returns the exact output of completed Work; for failed or
//     cancelled Work it returns the Status at once. Otherwise it waits
//     until the Work settles, timeout (capped at MaxResultWait; 0 does not
//     wait) passes or ctx is done, and returns the Status then. A negative
//     timeout is ErrInvalidTimeout. The output is meaningful only when the
//     returned Status is completed. That Status has ResultRead as it was
//     before this read: false on the first read of the output.
//   - Cancel: queued Work is cancelled before it runs; running Work becomes
//     cancel-requested and is stopped cooperatively (completion or an
//     unrelated failure may still win); a repeated request is accepted with
//     no change; terminal Work is not accepted.
//   - Detach hides a Work from its owner (ErrNotFound afterwards) without
//     cancelling it.
//   - Send queues guidance for a non-terminal agent child, delivered in
//     order at the child's next model-request boundary
//     (boundary.Guidance). It is idempotent per commandID (same text: the
//     first receipt; other text: ErrConflict) while the Work's command
//     records last; everything it keeps is bounded (ErrMessageTooLarge,
//     ErrMailboxFull). Errors are checked in the order ErrInvalidOwner,
//     ErrEmptyMessage, ErrMessageTooLarge, ErrNotFound, ErrNotAgent,
//     ErrConflict, ErrTerminal, ErrMailboxFull. Cursors count 1, 2, ... per
//     Work.
//   - Release detaches all of an owner's visible Work, cancels the
//     unfinished part and forgets the owner (including its starts budget
//     and its pool). Its error is non-nil only when the release could not
//     be done (e.g. a remote registry that does not answer); releasing an
//     owner the engine does not know, or the zero Owner, is no error.
//   - SetPool gives a top-level owner a pool of turns, tool calls and
//     tokens that each start (and foreground call) reserves its child's
//     Budget from; a start the pool cannot cover fails with
//     ErrBudgetExhausted before any Work exists, and what a settled child
//     did not spend is refunded. The zero Owner or a child's scope is
//     ErrInvalidOwner; a negative Budget field is ErrInvalidBudget
//     (Budget.Validate).
//   - Subscribe returns a Subscription to content-free completion
//     notices for o's visible Work (one per Work reaching a terminal state
//     from now on); it never waits for the reader (a full buffer drops and
//     counts). A reader treats a Notice as a wake-up and reads the state
//     with List or Status. Engines other than the in-process one build it with
//     work/driver.
//   - A Spec with NeedsApproval is held queued, out of the dispatch queue
//     and holding no slot, until it is answered (Pending, Approve, Deny);
//     Call refuses it (ErrInvalidSpec). o is the launching owner, or
//     Approver() for a role that sees and answers every owner's requests.
//     A Work that is unknown, that belongs to another owner or that does
//     not await approval (any more: an answer counts once) is ErrNotFound,
//     as is an empty id; the zero Owner is ErrInvalidOwner. Pending
//     returns the Work visible to o that awaits approval, oldest request
//     first (an empty, non-nil slice for none); Approve lets the Work join
//     the dispatch queue; Deny cancels it (Status.Class ClassDenied).
//   - Updates returns a Work's updates (ReportUpdate) with Seq > after, in
//     order; they stay readable after the Work ends, until its record is
//     evicted with it. Answer queues guidance as Send does, for an agent or
//     a function child (the work tool's send still refuses a function
//     child): the child reads it at its next boundary (an agent) or from
//     AwaitAnswer (a function child).
//   - An implementation without approvals or without updates answers
//     errors.ErrUnsupported from their methods, and refuses a Spec with
//     NeedsApproval (ErrInvalidSpec) or an update policy
//     (Spec.Updates) it cannot keep. Every engine in this module has
//     both.
//   - work/boundary's Settled returns every terminal Work visible to o,
//     oldest settlement first, with no limit but the retention (an empty
//     slice for none); work/boundary's Live reports whether o has visible
//     Work that is not terminal. The error of either is ErrInvalidOwner
//     for the zero Owner, else non-nil only when the Work cannot be read
//     (as for work/boundary's Rows). A reader woken by a Notice reads Live
//     first, then Settled.
//   - work/boundary's Observer returns the Observer the layers above
//     report through (never nil); its Now returns the implementation's
//     clock's time.
//
// What an implementation may legitimately choose: the Ref's guarantees
// (Ref.Durable), the attempt count in Status, how many Works run at once
// and where.
//
// The in-process Engine (New's) is the process-local registry and runner of
// Work; every owner operation costs O(that owner's items), never a scan of
// the registry. An Engine made neither by New nor by a runner (its zero
// value, or a nil *Engine) runs nothing: its methods that return an error
// return ErrNotInitialized, the others zero values.
//
// Every goroutine running a child of an in-process Engine (a Work's child, a
// foreground call's, an external job's Submit and Await) carries the
// profiler label "agentwork.engine" (runtime/pprof), with a value
// unique to that Engine within the process (a decimal number), set
// afresh for each child it runs; goroutines a child starts inherit it
// (unless the child replaces its labels first), so CPU and goroutine
// profiles can be split by Engine, for example with pprof's -tagfocus.
// The Engine never reads it back.
type Engine struct {
	// impl is the implementation of an Engine that is not the in-process
	// one (work/driver's NewEngine); nil for the in-process Engine, whose
	// state is the fields below.
	impl engineDriver

	// The configuration, resolved from New's options once
	// (resolveOptions) and read-only afterwards: the limits, the clock,
	// the Observer (lim's), how long Shutdown waits for children
	// (WithShutdownGrace), the budget configuration and the first invalid
	// option's error, which every Start, Call and SetPool returns
	// (guard.go).
	lim      limit.Limits
	clock    Clock
	observer observe.Observer
	grace    time.Duration
	budget   budgetConfig
	optErr   error

	unwatch func()
	nop     bool // the Observer is the no-op one

	mu     sync.Mutex
	closed bool
	owners map[string]*ownerState
	// lastOwner is the entry ownerLocked found last (nil once released).
	lastOwner *ownerState
	ready     ownerRing // owners with queued Work, round-robin
	running   itemList  // running and cancel-requested Work
	// used counts the pool's running slots in use; reclaimers are the
	// Works whose waiter waits for a slot, FIFO (see slots.go).
	used        int
	reclaimers  []*item
	reclaimHook func() // tests only
	boundHook   func() // tests only: a boundary starts waiting for a slot
	// foreground holds the foreground calls in progress.
	foreground map[*foreground]struct{}
	seq        uint64
	counts     map[string]*[len(observe.States)]int // target label -> live count per state
	// The system clock's deadlines (deadline.go): running Works with one,
	// a min-heap by deadline, and the one timer, armed for dlAt.
	dls     []*item
	dlTimer *time.Timer
	dlAt    time.Time
	// The system clock's Result waits (waiter.go): a min-heap by
	// deadline (since waitEpoch), and the one timer, armed for waitAt.
	waits     []*waiter
	waitTimer *time.Timer
	waitAt    time.Duration
	// Waiters kept for reuse, a list by next (putWaiterLocked).
	spareWaiters  *waiter
	nSpareWaiters int
	bud           budgets
	jobs          jobs // external jobs: poll bounds and timers (jobpoll.go, jobtimer.go)

	// live counts child goroutines and foreground calls in progress; once
	// closing is set and live is zero, idle is closed (once, under mu).
	live     atomic.Int64
	closing  atomic.Bool
	idle     chan struct{}
	idleDone bool

	subs     map[string]map[*Subscription]struct{} // owner id -> subscriptions (subscribe.go)
	draining bool                                  // Shutdown refuses new starts (shutdown.go)
	held     map[string]*item                      // Works awaiting approval, by id (approval.go)

	labels context.Context // child goroutines' profiler labels (childgoroutine.go)
	ids    *mrand.ChaCha8  // the generator of Work ids, guarded by mu (scopeIDLocked)
}

// New returns an in-process Engine configured by opts. If the Observer
// is an observe.Watcher, New calls its Watch method.
func New(opts ...Option) *Engine {
	s := &Engine{
		owners:     make(map[string]*ownerState),
		foreground: make(map[*foreground]struct{}),
		counts:     make(map[string]*[len(observe.States)]int),
		idle:       make(chan struct{}),
	}
	s.lim, s.clock, s.grace, s.budget, s.optErr = resolveOptions(opts)
	s.observer = s.lim.Observer
	s.labels = childLabels()
	s.ids = newIDSource()
	_, s.nop = s.observer.(observe.NopObserver)
	if w, ok := s.observer.(observe.Watcher); ok {
		s.unwatch = w.Watch(s)
	}
	return s
}

// obs is work/boundary's Observer (which documents it).
func (s *Engine) obs() observe.Observer {
	if s != nil && s.impl != nil {
		return s.impl.Observer()
	}
	if s == nil || s.observer == nil { // a nil or zero Engine
		return observe.NopObserver{}
	}
	return s.observer
}

// now is work/boundary's Now (which documents it).
func (s *Engine) now() time.Time {
	if s != nil && s.impl != nil {
		return s.impl.Now()
	}
	if s == nil || s.clock == nil {
		return time.Time{}
	}
	return s.clock.Now()
}

// scopeIDLocked returns the scope id in buf (newScopeBuf) with a new id
// from s's own generator (guarded by s.mu): Start makes the buffer before
// it takes the lock and the id under it, without a pool's round trip.
func (s *Engine) scopeIDLocked(buf []byte) string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], s.ids.Uint64())
	binary.LittleEndian.PutUint64(b[8:], s.ids.Uint64())
	return scopeID(buf, &b)
}
