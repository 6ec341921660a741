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
	errClosed          = fmt.Errorf("work: supervisor closed: %w", context.Canceled)
	errDeadline        = fmt.Errorf("work: maximum duration reached: %w", context.DeadlineExceeded)
)

// Supervisor is the process-local registry and runner of Work. Create one
// with New; it is safe for concurrent use. A Supervisor not made by New
// (its zero value, or a nil *Supervisor) runs nothing: its methods that
// return an error return ErrNotInitialized, the others zero values. Every owner operation costs
// O(that owner's items), never a scan of the registry.
//
// Every goroutine running a child of a Supervisor (a Work's child, a
// foreground call's, an external job's Submit and Await) carries the
// profiler label "agentwork.supervisor" (runtime/pprof), with a value
// unique to that Supervisor within the process (a decimal number), set
// afresh for each child it runs; goroutines a child starts inherit it
// (unless the child replaces its labels first), so CPU and goroutine
// profiles can be split by Supervisor, for example with pprof's -tagfocus.
// The Supervisor never reads it back.
type Supervisor struct {
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

// New returns a Supervisor configured by opts. If the Observer is an observe.Watcher,
// New calls its Watch method.
func New(opts ...Option) *Supervisor {
	s := &Supervisor{
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

// Observer returns the configured Observer (observe.NopObserver when none was
// set), so that layers above the engine report through the same seam.
func (s *Supervisor) Observer() observe.Observer {
	if s == nil || s.observer == nil { // a nil or zero Supervisor
		return observe.NopObserver{}
	}
	return s.observer
}

// Now returns the Supervisor's clock's current time (the zero time for a
// Supervisor not made by New).
func (s *Supervisor) Now() time.Time {
	if s == nil || s.clock == nil {
		return time.Time{}
	}
	return s.clock.Now()
}

// scopeIDLocked returns the scope id in buf (newScopeBuf) with a new id
// from s's own generator (guarded by s.mu): Start makes the buffer before
// it takes the lock and the id under it, without a pool's round trip.
func (s *Supervisor) scopeIDLocked(buf []byte) string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], s.ids.Uint64())
	binary.LittleEndian.PutUint64(b[8:], s.ids.Uint64())
	return scopeID(buf, &b)
}
