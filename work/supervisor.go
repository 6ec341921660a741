package work

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Owner is an agent instance that owns Work. Only its owner can see, await,
// cancel, detach or steer a Work. The zero Owner is invalid.
//
// A top-level owner has depth 0. A running child's own scope
// (Execution.Scope) is an Owner one level deeper than the child's owner; the
// depth limit applies to it.
type Owner struct {
	id    string
	depth int
	sc    *scope // set for a child's scope
}

// scope is a child's own owner scope (Execution.Scope). Its fields are
// guarded by the Supervisor's lock.
type scope struct {
	ended  bool        // the child has returned: the scope admits no more Work
	work   *item       // the background Work whose scope this is; nil for a foreground call's
	parent *scope      // the scope the Work or call was started in; nil under a top-level owner
	os     *ownerState // the scope's registry entry while it has one
	acct   *account    // the child's budget reservation: its children reserve from it
}

// holder returns the background Work whose running slot the code of scope
// sc runs on: the Work itself for a background child's scope, the nearest
// enclosing one for a foreground call's scope, nil when no Work encloses it
// (a foreground call made by a top-level owner).
func (sc *scope) holder() *item {
	for ; sc != nil; sc = sc.parent {
		if sc.work != nil {
			return sc.work
		}
	}
	return nil
}

// NewOwner returns the top-level owner named id. Two Owners with the same id
// are the same owner. The id may not contain "/" (child scopes use it):
// every operation refuses such an owner with ErrInvalidOwner (Rows returns
// no rows and Release does nothing), so no top-level id can reach a child's
// scope.
func NewOwner(id string) Owner { return Owner{id: id} }

// ID returns the owner's id.
func (o Owner) ID() string { return o.id }

// Depth returns the owner's nesting depth: 0 for a top-level owner.
func (o Owner) Depth() int { return o.depth }

// IsZero reports whether o is the zero (invalid) Owner.
func (o Owner) IsZero() bool { return o.id == "" }

// Target describes the child a Work runs.
type Target struct {
	Label string // the authored tool-map key; required
	ID    string // the child's own id, reported as Ref.TargetID; defaults to Label
	Kind  Kind   // KindAgent or KindFunction; required
}

func (t Target) id() string {
	if t.ID != "" {
		return t.ID
	}
	return t.Label
}

// RunFunc is a child's body. It runs on its own goroutine with a context
// that carries only what the Observer bound (for example a span) and the
// Execution; it must return when ctx is done (cancellation is cooperative).
type RunFunc func(ctx context.Context) (string, error)

// Spec describes Work to start.
type Spec struct {
	Owner  Owner
	Target Target
	Run    RunFunc
	// Input is the child's own input, the one Run was built with. An
	// Engine that runs children in other processes starts them from
	// Target.Label and Input; the in-process Supervisor ignores it.
	Input string
	// MaxDuration, when > 0, lowers the Supervisor's per-Work deadline for
	// this Work; it never raises it (it is clamped to the Supervisor's
	// maximum duration, unless that is 0, meaning none).
	MaxDuration time.Duration
	// MaxResultBytes, when > 0, lowers the Supervisor's output limit for
	// this Work; it is clamped the same way.
	MaxResultBytes int
	// Budget bounds the child's turns, tool calls and tokens (and its
	// duration when MaxDuration is 0); see Budget for inheritance.
	Budget Budget
	// FailOnBudget makes an exhausted budget fail the Work (class
	// budget_exhausted) instead of granting a final request.
	FailOnBudget bool
	// CallID is the launch's identity (the model's tool-call id), or "".
	// Start with a CallID the owner already launched with returns the
	// same Ref and starts nothing when Target.Label and InputDigest match,
	// and fails with ErrConflict when they do not (see MaxLaunchRecords).
	CallID string
	// InputDigest is a digest of the child's input (SHA-256), compared
	// for a repeated CallID. The engine keeps only the digest.
	InputDigest [sha256.Size]byte
}

// The causes a child's context is cancelled with (context.Cause). The two
// cancellations wrap context.Canceled, so that a child returning
// context.Cause(ctx) is treated like one returning ctx.Err().
var (
	errCancelRequested = fmt.Errorf("work: cancel requested: %w", context.Canceled)
	errClosed          = fmt.Errorf("work: supervisor closed: %w", context.Canceled)
	errDeadline        = fmt.Errorf("work: maximum duration reached: %w", context.DeadlineExceeded)
)

// Supervisor is the process-local registry and runner of Work. Create one
// with New; it is safe for concurrent use. Every owner operation costs
// O(that owner's items), never a scan of the registry.
type Supervisor struct {
	cfg     config
	unwatch func()
	nop     bool // the Observer is the no-op one

	mu      sync.Mutex
	closed  bool
	owners  map[string]*ownerState
	ready   ownerRing // owners with queued Work, round-robin
	running itemList  // running and cancel-requested Work
	// used counts the pool's running slots in use; reclaimers are the
	// Works whose waiter waits for a slot, FIFO (see slots.go).
	used        int
	reclaimers  []*item
	reclaimHook func() // tests only
	boundHook   func() // tests only: a boundary starts waiting for a slot
	// foreground holds the foreground calls in progress.
	foreground map[*foreground]struct{}
	seq        uint64
	counts     map[string]*[len(States)]int // target label -> live count per state
	// The system clock's deadlines (deadline.go): running Works with one,
	// a min-heap by deadline, and the one timer, armed for dlAt.
	dls     []*item
	dlTimer *time.Timer
	dlAt    time.Time
	bud     budgets

	// live counts child goroutines and foreground calls in progress; once
	// closing is set and live is zero, idle is closed (once, under mu).
	live     atomic.Int64
	closing  atomic.Bool
	idle     chan struct{}
	idleDone bool

	subs     map[string]map[*Subscription]struct{} // owner id -> subscriptions (subscribe.go)
	draining bool                                  // Shutdown refuses new starts (shutdown.go)

	labels     context.Context // child goroutines' profiler labels (childgoroutine.go)
	labelValue string
}

type ownerState struct {
	id       string
	depth    int
	sc       *scope             // nil for a top-level owner
	items    map[string]*item   // visible Work
	hidden   map[*item]struct{} // detached Work that is not yet terminal
	active   int                // queued + running, visible or not
	starts   int
	queue    itemList // queued Work, FIFO
	terminal itemList // visible terminal Work, oldest finished first
	// classes counts the terminal list's Works per eviction class, so
	// that eviction finds the class to evict from without a scan.
	classes [evictUnread + 1]int
	// rprev and rnext link the owner into the ready ring while inRing.
	rprev, rnext *ownerState
	inRing       bool
	launches     launchRecords
	// countsLabel is the target label of the owner's last Start and
	// counts its census entry (s.counts[countsLabel]).
	countsLabel string
	counts      *[len(States)]int
}

type item struct {
	ref       Ref
	owner     *ownerState
	target    Target
	seq       uint64
	state     State
	created   time.Time
	started   time.Time
	finished  time.Time
	output    string
	hasOutput bool
	read      bool
	detached  bool
	lending   bool            // a waiter of this Work lends its running slot (slots.go)
	done      chan struct{}   // made by the first waiter (doneLocked), closed after the terminal events
	ctx       context.Context // from Observer.Bind; events use it
	run       RunFunc         // nil once running
	cancel    context.CancelCauseFunc
	stopTimer func() bool // the deadline's, on a Clock other than the system's
	dlIdx     int         // 1 + its index in the deadline heap; 0 when not in it
	maxDur    time.Duration
	maxBytes  int
	// prev and next link the Work into list: its owner's queue, the
	// Supervisor's running list or its owner's terminal list (ilist.go).
	prev, next *item
	list       *itemList
	mb         *mailbox // guidance and command records, from the first Send
	sc         *scope   // this Work's own owner scope, from running
	// Running slots (slots.go): the Work whose lent slot this one runs on
	// (nil: a pool slot), the descendant running on this one's lent slot,
	// the Works its lending waiters wait for (one entry per waiter), the
	// channel closed when this Work, owed its slot back, has one again
	// (reclaiming mirrors reclaim != nil for the lock-free boundary check),
	// whether code on its slot has used the model-request boundary, and
	// how many Works are queued below this one.
	lender      *item
	borrower    *item
	awaited     []*item
	reclaim     chan struct{}
	reclaiming  atomic.Bool
	boundary    atomic.Bool
	queuedBelow int32
	emitMu      sync.Mutex
	budget      *run // budget state: brun
	brun        run
	prog        progress
	scopeID     string            // the id of the Work's own scope: owner id + "/" + Work id
	counts      *[len(States)]int // the census of its target label
	exec        Execution         // its child's, from running
	xctx        execCtx           // its child's context, from running
	scope       scope             // its own owner scope (sc points here), from running
}

// New returns a Supervisor configured by opts. If the Observer is a Watcher,
// New calls its Watch method.
func New(opts ...Option) *Supervisor {
	s := &Supervisor{
		cfg:        newConfig(opts),
		owners:     make(map[string]*ownerState),
		foreground: make(map[*foreground]struct{}),
		counts:     make(map[string]*[len(States)]int),
		idle:       make(chan struct{}),
	}
	s.labels, s.labelValue = childLabels()
	_, s.nop = s.cfg.observer.(NopObserver)
	if w, ok := s.cfg.observer.(Watcher); ok {
		s.unwatch = w.Watch(s)
	}
	return s
}

// Observer returns the configured Observer (NopObserver when none was
// set), so that layers above the engine report through the same seam.
func (s *Supervisor) Observer() Observer { return s.cfg.observer }

// Now returns the Supervisor's clock's current time.
func (s *Supervisor) Now() time.Time { return s.cfg.clock.Now() }

// Limits returns the effective limits.
func (s *Supervisor) Limits() Limits {
	c := s.cfg
	return Limits{MaxRunning: c.maxRunning, MaxOutstanding: c.maxOutstanding, MaxStarts: c.maxStarts,
		MaxDepth: c.maxDepth, MaxDuration: c.maxDuration, MaxResultBytes: c.maxResultBytes,
		RetainTerminal: c.retainTerminal, RetainAge: c.retainAge,
		MaxMessageBytes: c.maxMessageBytes, MaxQueuedGuidance: c.maxQueued,
		MaxQueuedGuidanceBytes: c.maxQueuedBytes, MaxCommandRecords: c.maxCommands}
}

// Census calls fn once for every known target label and state with the
// number of Works in the registry in that state (visible or detached, zero
// included). It holds the Supervisor's lock while it runs: fn must be quick
// and must not call the Supervisor.
func (s *Supervisor) Census(fn func(target string, state State, n int)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for label, c := range s.counts {
		for i, st := range States {
			fn(label, st, c[i])
		}
	}
}

// idSources are ChaCha8 generators (cryptographically strong), each seeded
// from crypto/rand, that make the 128-bit random ids: reading crypto/rand
// itself asks the kernel every time, several hundred nanoseconds a Start.
var idSources = sync.Pool{New: func() any {
	var seed [32]byte
	_, _ = rand.Read(seed[:]) // never returns an error (crypto/rand, Go 1.24+)
	return mrand.NewChaCha8(seed)
}}

// randomID fills b with random bytes.
func randomID(b *[16]byte) {
	g := idSources.Get().(*mrand.ChaCha8)
	_, _ = g.Read(b[:]) // never returns an error
	idSources.Put(g)
}

func newID() string {
	var b [16]byte
	randomID(&b)
	return hex.EncodeToString(b[:])
}

// newScopeID returns owner + "/" + a new id, and the id (a substring: one
// allocation for both).
func newScopeID(owner string) (scope, id string) {
	var b [16]byte
	randomID(&b)
	buf := make([]byte, len(owner)+1+2*len(b))
	copy(buf, owner)
	buf[len(owner)] = '/'
	hex.Encode(buf[len(owner)+1:], b[:])
	scope = unsafe.String(unsafe.SliceData(buf), len(buf))
	return scope, scope[len(owner)+1:]
}

// emission is a batch of events gathered under s.mu and delivered after it
// is released, in order, holding each Work's emit lock so that events of one
// Work never interleave or reorder.
//
// The first few events and done channels live in the emission's own arrays
// and the overflow in separate slices: no field points into the emission
// itself, so that it stays on the caller's stack and the common case
// allocates nothing.
type emission struct {
	n       int // events gathered: the first len(evs) in its/evs, the rest in moreIts/moreEvs
	its     [4]*item
	evs     [4]Event
	moreIts []*item
	moreEvs []Event
	nd      int // done channels: the first in done0, the rest in moreDone
	done0   chan struct{}
	more    []chan struct{}
	notices []pendingNotice // sent after the events are delivered
	// now is the clock's reading for the critical section that gathers
	// the emission (zero until read): its events share it.
	now time.Time
}

// nowLocked returns the time of the critical section gathering e, reading
// the clock once per section.
func (s *Supervisor) nowLocked(e *emission) time.Time {
	if e.now.IsZero() {
		e.now = s.cfg.clock.Now()
	}
	return e.now
}

// emissions are settle's emissions, reused.
var emissions = sync.Pool{New: func() any { return new(emission) }}

// add appends ev, an event of it, to e. The settle path uses push, which
// builds the event in place (an Event is 272 bytes: every one built on a
// child goroutine's stack makes its frames larger).
//
//go:noinline
func (e *emission) add(it *item, ev Event) {
	p := e.push(it, ev.Type, ev.Time)
	ev.WorkID, ev.Owner, ev.Depth, ev.Target, ev.Kind = p.WorkID, p.Owner, p.Depth, p.Target, p.Kind
	*p = ev
}

// push appends an event of it of type typ at time t to e and returns it,
// its Work's fields set, for the caller to complete before the next push.
func (e *emission) push(it *item, typ EventType, t time.Time) *Event {
	var ev *Event
	if e.n < len(e.evs) {
		e.its[e.n] = it
		ev = &e.evs[e.n]
	} else {
		e.moreIts = append(e.moreIts, it)
		e.moreEvs = append(e.moreEvs, Event{})
		ev = &e.moreEvs[len(e.moreEvs)-1]
	}
	e.n++
	*ev = Event{} // a pooled emission's entries are cleared, an Event literal here is a copy
	ev.Type, ev.Time = typ, t
	ev.WorkID, ev.Owner, ev.Depth = it.ref.ID, it.owner.id, it.owner.depth
	ev.Target, ev.Kind = it.target.Label, it.target.Kind
	return ev
}

// item returns the Work of the i-th event.
func (e *emission) item(i int) *item {
	if i < len(e.its) {
		return e.its[i]
	}
	return e.moreIts[i-len(e.its)]
}

// event returns the i-th event.
func (e *emission) event(i int) *Event {
	if i < len(e.evs) {
		return &e.evs[i]
	}
	return &e.moreEvs[i-len(e.evs)]
}

// settled records that it's done channel, if a waiter made one, closes
// after the events.
func (e *emission) settled(it *item) {
	if it.done == nil {
		return
	}
	if e.nd == 0 {
		e.done0 = it.done
	} else {
		e.more = append(e.more, it.done)
	}
	e.nd++
}

// unlockAndEmit releases s.mu and delivers e. Must be called with s.mu held.
//
// It runs on child goroutines as they settle: what it does only now and
// then (many Works at once, an Observer that is not the no-op one,
// notices) is in functions of their own, so that its own frame stays
// small and settling fits in a new goroutine's stack.
func (s *Supervisor) unlockAndEmit(e *emission) {
	var buf [4]*item
	locked := buf[:0]
	if e.n <= 16 {
		for i := range e.n {
			if it := e.item(i); !containsItem(locked, it) {
				it.emitMu.Lock()
				locked = append(locked, it)
			}
		}
	} else {
		locked = lockAll(e)
	}
	s.mu.Unlock()
	if !s.nop || len(e.notices) > 0 {
		s.deliver(e)
	}
	// Settlement is announced only after the observer has seen it, so a
	// Result that returns a terminal state is never ahead of telemetry.
	if e.nd > 0 {
		close(e.done0)
		for _, ch := range e.more {
			close(ch)
		}
	}
	for _, it := range locked {
		it.emitMu.Unlock()
		if it.prog.pending.Load() {
			s.flushProgress(it)
		}
	}
}

// lockAll takes the emit locks of e's Works, each once, and returns them.
// Close and Release emit for many Works at once: a linear membership test
// would make them quadratic.
//
//go:noinline
func lockAll(e *emission) []*item {
	var locked []*item
	seen := make(map[*item]struct{}, e.n)
	for i := range e.n {
		if it := e.item(i); !has(seen, it) {
			seen[it] = struct{}{}
			it.emitMu.Lock()
			locked = append(locked, it)
		}
	}
	return locked
}

// deliver hands e's events to the Observer and sends its notices.
//
//go:noinline
func (s *Supervisor) deliver(e *emission) {
	if !s.nop {
		for i := range e.n {
			s.cfg.observer.Event(e.item(i).ctx, *e.event(i))
		}
	}
	for _, n := range e.notices {
		n.sub.send(n.n)
	}
}

func has(m map[*item]struct{}, it *item) bool {
	_, ok := m[it]
	return ok
}

// doneLocked returns the channel closed once it is terminal and its events
// are delivered, made by the first waiter (most Works have none).
func (it *item) doneLocked() chan struct{} {
	if it.done == nil {
		it.done = make(chan struct{})
	}
	return it.done
}

func containsItem(its []*item, it *item) bool {
	for _, x := range its {
		if x == it {
			return true
		}
	}
	return false
}

// transition is the only place a Work's state changes. It refuses any edge
// CanTransition does not allow (and returns nil), keeps the census and
// records the event at time t, which it returns for the caller to complete
// (before anything else is added to e).
func (s *Supervisor) transition(it *item, to State, e *emission, t time.Time) *Event {
	if !CanTransition(it.state, to) {
		return nil
	}
	if to.Terminal() && it.mb != nil && len(it.mb.queued) > 0 {
		// Undelivered guidance is dropped before the terminal event, while
		// the execution is still open for observers.
		n := len(it.mb.queued)
		it.mb.queued, it.mb.bytes = nil, 0
		e.push(it, EventGuidanceDropped, t).Count = n
	}
	c := it.counts
	c[it.state.index()]--
	c[to.index()]++
	from := it.state
	it.state = to
	if to.Terminal() {
		s.settledLocked(it, t, e)
	}
	ev := e.push(it, EventType(to), t)
	ev.From, ev.To = from, to
	return ev
}

// Start accepts Work for spec.Owner and returns its Ref at once; the child
// runs later on its own goroutine. ctx is the caller's context: it is
// handed to Observer.Bind (to link the execution to the launch) and is not
// otherwise used; none of its values or its cancellation reach the child.
//
// Start fails with ErrInvalidOwner, ErrInvalidSpec, ErrClosed,
// ErrScopeEnded or ErrLimit (outstanding, starts or depth); on failure
// nothing is registered. Admission is atomic; Observer.Bind then runs
// without the Supervisor's lock. A Start that overlaps Close (or the
// owner's Release) may return a Ref whose Work was cancelled before it ran.
func (s *Supervisor) Start(ctx context.Context, spec Spec) (Ref, error) {
	if err := validOwner(spec.Owner); err != nil {
		return Ref{}, err
	}
	if err := validTarget(spec.Target); err != nil {
		return Ref{}, err
	}
	if spec.Run == nil {
		return Ref{}, errorf(ErrInvalidSpec, "run function is nil")
	}
	// The Work's id and item are made before the lock is taken (a refused
	// Start drops them), so that its holders wait for no allocation.
	scopeID, id := newScopeID(spec.Owner.id)
	it := &item{
		ref:      Ref{ID: id, TargetID: spec.Target.id()},
		target:   spec.Target,
		state:    StateQueued,
		run:      spec.Run,
		maxBytes: clamp(spec.MaxResultBytes, s.cfg.maxResultBytes),
		scopeID:  scopeID,
	}
	r := &it.brun
	s.mu.Lock()
	if r, err, ok := s.replayLocked(&spec); ok {
		s.mu.Unlock()
		if err != nil {
			return Ref{}, err
		}
		<-r.ready // registered right after Bind, which does not wait
		return r.ref, nil
	}
	now := s.cfg.clock.Now()
	os, reason := s.admitLocked(spec.Owner)
	if reason != "" {
		s.mu.Unlock()
		s.cfg.observer.Event(ctx, Event{Type: EventRefused, Owner: spec.Owner.id, Depth: spec.Owner.depth,
			Target: spec.Target.Label, Kind: spec.Target.Kind, Time: now, ErrorClass: reason})
		return Ref{}, s.refusal(reason)
	}
	if short := s.reserveLocked(&spec, r); short != "" {
		s.mu.Unlock()
		s.cfg.observer.Event(ctx, Event{Type: EventRefused, Owner: spec.Owner.id, Depth: spec.Owner.depth,
			Target: spec.Target.Label, Kind: spec.Target.Kind, Time: now, ErrorClass: ClassBudgetExhausted, Budget: short})
		return Ref{}, errorf(ErrBudgetExhausted, "the %s budget of this owner cannot cover the child's", short)
	}
	// Reserve the start against the owner's limits, then bind outside the
	// lock so that a slow observer never holds up other owners.
	if os == nil {
		os = s.newOwnerLocked(spec.Owner)
	}
	os.starts++
	os.active++
	launch := recordLaunchLocked(os, &spec, it.ref)
	// Bind runs without the lock; the no-op Observer's Bind is known, and
	// Start then keeps the lock throughout.
	_, nop := s.cfg.observer.(NopObserver)
	if !nop {
		s.mu.Unlock()
	}

	it.owner, it.created = os, now
	it.maxDur, it.budget, r.it = r.budget.MaxDuration, r, it
	var e emission
	e.add(it, Event{Type: EventQueued, To: StateQueued, Time: now})
	if nop {
		it.ctx = context.Background()
		e.now = now // the lock was held throughout: the same critical section
	} else {
		it.ctx = s.cfg.observer.Bind(ctx, context.Background(), *e.event(0))
		s.mu.Lock()
	}
	s.seq++
	it.seq = s.seq
	os.items[it.ref.ID] = it
	c := os.counts
	if os.countsLabel != spec.Target.Label || c == nil {
		c = s.counts[spec.Target.Label]
		if c == nil {
			c = new([len(States)]int)
			s.counts[spec.Target.Label] = c
		}
		os.countsLabel, os.counts = spec.Target.Label, c
	}
	it.counts = c
	c[StateQueued.index()]++
	os.queue.pushBack(it)
	s.queuedBelowLocked(os, 1)
	if launch != nil {
		close(launch.ready)
	}
	if !os.inRing {
		s.ready.pushBack(os)
	}
	switch {
	case !nop && s.owners[os.id] != os:
		// Release (or the end of a child's scope) overlapped the start:
		// the Work goes the way of the owner's other Work, detached first
		// as releaseLocked does (whether or not Close overlapped too).
		s.detachLocked(it, &e)
		s.cancelLocked(it, s.cfg.clock.Now(), errCancelRequested, &e)
	case s.closed:
		// Close overlapped the start: the Work was accepted and is
		// cancelled before it runs, as Close does to all queued Work.
		s.cancelLocked(it, s.cfg.clock.Now(), errClosed, &e)
	default:
		// An idle slot lent by an enclosing waiter goes first, so that
		// the pool's free slots stay with the fair order.
		s.offerLocked(os, &e)
		s.dispatchLocked(&e)
	}
	ref := it.ref
	s.unlockAndEmit(&e)
	return ref, nil
}

func validTarget(t Target) error {
	if t.Label == "" {
		return errorf(ErrInvalidSpec, "target label is empty")
	}
	if t.Kind != KindAgent && t.Kind != KindFunction {
		return errorf(ErrInvalidSpec, "unknown target kind %d", t.Kind)
	}
	return nil
}

// admitLocked returns o's registry entry (nil when it has none yet) and ""
// when o may start one more Work, else the refusal reason: "closed" or a
// Limit name.
func (s *Supervisor) admitLocked(o Owner) (*ownerState, string) {
	if s.closed || s.draining {
		return nil, "closed"
	}
	if o.sc != nil && o.sc.ended {
		return nil, reasonScopeEnded
	}
	if o.depth >= s.cfg.maxDepth {
		return nil, LimitDepth
	}
	os := s.visibleLocked(o)
	switch {
	case os == nil:
		return nil, ""
	case os.active >= s.cfg.maxOutstanding:
		return nil, LimitOutstanding
	case s.cfg.maxStarts > 0 && os.starts >= s.cfg.maxStarts:
		return nil, LimitStarts
	}
	return os, ""
}

// validOwner refuses the zero Owner and a top-level id containing "/".
func validOwner(o Owner) error {
	if o.IsZero() {
		return ErrInvalidOwner
	}
	if o.depth == 0 && strings.Contains(o.id, "/") {
		return errorf(ErrInvalidOwner, "a top-level owner id may not contain \"/\"")
	}
	return nil
}

// refusal maps a refusal reason to its error.
func (s *Supervisor) refusal(reason string) error {
	switch reason {
	case "closed":
		return ErrClosed
	case reasonScopeEnded:
		return ErrScopeEnded
	case LimitDepth:
		return errorf(ErrLimit, "nesting depth limit %d reached", s.cfg.maxDepth)
	case LimitOutstanding:
		return errorf(ErrLimit, "outstanding limit %d reached for this owner", s.cfg.maxOutstanding)
	default:
		return errorf(ErrLimit, "starts limit %d reached for this owner", s.cfg.maxStarts)
	}
}

// newOwnerLocked registers o, which has no registry entry.
func (s *Supervisor) newOwnerLocked(o Owner) *ownerState {
	os := &ownerState{id: o.id, depth: o.depth, sc: o.sc, items: make(map[string]*item)}
	s.owners[o.id] = os
	if o.sc != nil {
		o.sc.os = os
	}
	return os
}

// popLocked takes the first queued Work of os (which is in the ready ring)
// and moves os to the back of the ring when it has more.
func (s *Supervisor) popLocked(os *ownerState) *item {
	it := os.queue.front()
	os.queue.remove(it)
	s.queuedBelowLocked(os, -1)
	s.ready.remove(os)
	if os.queue.len() > 0 {
		s.ready.pushBack(os)
	}
	return it
}

// runLocked starts a Work taken from its owner's queue, on a pool slot
// (lender nil) or on lender's lent slot.
func (s *Supervisor) runLocked(it *item, lender *item, e *emission) {
	ctx, run := s.prepareRunLocked(it, lender, e)
	s.live.Add(1)
	go s.execute(it, ctx, run)
}

// prepareRunLocked moves a Work taken from its owner's queue to running and
// returns the context and function its child runs with.
func (s *Supervisor) prepareRunLocked(it *item, lender *item, e *emission) (context.Context, RunFunc) {
	now := s.nowLocked(e)
	it.started = now
	s.transition(it, StateRunning, e, now).QueueWait = now.Sub(it.created)
	s.running.pushBack(it)
	if lender != nil {
		it.lender, lender.borrower = lender, it
	}
	ctx, cancel := context.WithCancelCause(it.ctx)
	it.cancel = cancel
	it.scope = scope{work: it, parent: it.owner.sc, acct: &it.brun.account}
	it.sc = &it.scope
	it.exec = Execution{s: s, it: it, scope: Owner{id: it.scopeID, depth: it.owner.depth + 1, sc: it.sc}, run: it.budget, cctx: ctx}
	it.xctx = execCtx{Context: ctx, ex: &it.exec}
	ctx = &it.xctx
	if it.maxDur > 0 {
		if _, system := s.cfg.clock.(systemClock); system {
			s.addDeadlineLocked(it, now)
		} else {
			it.stopTimer = s.cfg.clock.AfterFunc(it.maxDur, func() { cancel(errDeadline) })
		}
	}
	run := it.run
	it.run = nil
	return ctx, run
}

// exited is called as a child goroutine or a foreground call ends.
func (s *Supervisor) exited() {
	if s.live.Add(-1) == 0 && s.closing.Load() {
		s.mu.Lock()
		s.signalIdleLocked()
		s.mu.Unlock()
	}
}

// signalIdleLocked closes idle once the Supervisor is closed and nothing
// runs.
func (s *Supervisor) signalIdleLocked() {
	if s.closed && !s.idleDone && s.live.Load() == 0 {
		s.idleDone = true
		close(s.idle)
	}
}

// execute runs a child on its own goroutine and settles it. When the
// settlement frees the slot for a queued Work, the goroutine runs that one
// next (one goroutine per busy slot rather than per Work).
//
// The child runs in executeOne and settles here, two frames from the
// goroutine's start: with the no-op Observer settling fits in a new
// goroutine's first stack, which then never grows unless the child needs
// it to.
func (s *Supervisor) execute(it *item, ctx context.Context, run RunFunc) {
	defer s.exited()
	for it != nil {
		out, err, panicked := s.executeOne(it, ctx, run)
		it, ctx, run = s.settle(it, ctx, out, err, panicked, true)
	}
}

// executeOne runs it's child. When the child calls runtime.Goexit it
// settles it (and the goroutine ends).
func (s *Supervisor) executeOne(it *item, ctx context.Context, run RunFunc) (string, error, bool) {
	returned := false
	defer func() {
		// A child that calls runtime.Goexit (t.FailNow, log.Fatal's cousins)
		// neither returns nor panics: settle it as a panic so that its slot
		// is freed and it does not stay running forever.
		if !returned {
			s.settle(it, ctx, "", nil, true, false)
		}
	}()
	if !s.nop {
		growStack()
	}
	// Each Work's child gets the label afresh: the goroutine may have run
	// another Work whose child replaced its labels (pprof.Do restores
	// those of the child's context, which has none).
	s.labelChild()
	out, err, panicked := invoke(ctx, run)
	returned = true
	return out, err, panicked
}

// growStack grows a new child goroutine's stack while it is still shallow.
// Delivering a Work's events to an Observer that records them (an OTel
// SDK, a logger) from the child's goroutine as it settles needs a few
// kilobytes of stack; grown there, deep in settle, every Work paid for
// copying and adjusting all of its frames (runtime.newstack was 4% of the
// telemetry benchmark's profile, most of it in the instrumented arm).
// Grown here it costs a copy of two frames, and nothing on a goroutine
// whose stack is already large (a reused one, or a child that needed it).
//
//go:noinline
func growStack() {
	var buf [stackHeadroom]byte
	keepStack(buf[:])
}

// stackHeadroom is what growStack reserves: the stack grows to the next
// power of two above it (8 KB).
const stackHeadroom = 4096

//go:noinline
func keepStack(b []byte) { _ = b[len(b)-1] }

func invoke(ctx context.Context, run RunFunc) (out string, err error, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			out, err, panicked = "", nil, true
		}
	}()
	out, err = run(ctx)
	return out, err, false
}

// settle records how a running Work ended and frees its slot.
//
// With next, settle may hand the freed pool slot to the first Work of the
// fair order (when no reclaimer waits for one) and return it, running, for
// the calling goroutine to execute.
func (s *Supervisor) settle(it *item, ctx context.Context, out string, err error, panicked, next bool) (*item, context.Context, RunFunc) {
	// The emission comes from a pool: on the stack of a child goroutine
	// (which starts small) it would make the stack grow for every Work.
	e := emissions.Get().(*emission)
	s.mu.Lock()
	now := s.nowLocked(e)
	cause := context.Cause(ctx)
	to, class, bytes := StateCompleted, "", 0
	switch {
	case panicked:
		to, class = StateFailed, ClassPanic
	case errors.Is(cause, errDeadline):
		to, class = StateFailed, ClassDeadline
	case err != nil && it.state == StateCancelRequested && ctx.Err() != nil && errors.Is(err, context.Canceled):
		to = StateCancelled
	case err != nil && it.budget.refused():
		to, class = StateFailed, ClassBudgetExhausted
	case err != nil:
		to, class = StateFailed, ClassError
	case it.maxBytes > 0 && len(out) > it.maxBytes:
		to, class, bytes = StateFailed, ClassResultTooLarge, len(out)
	default:
		bytes = len(out)
		it.output, it.hasOutput = out, true
	}
	s.running.remove(it)
	if it.stopTimer != nil {
		it.stopTimer()
		it.stopTimer = nil
	}
	s.removeDeadlineLocked(it)
	it.cancel(nil)
	it.cancel = nil
	s.endRunLocked(it, class, e)
	if ev := s.transition(it, to, e, now); ev != nil {
		ev.Duration, ev.Bytes, ev.ErrorClass = now.Sub(it.started), bytes, class
	}
	if s.retireLocked(it, now, e) {
		s.evictLocked(it.owner)
	}
	s.endScopeLocked(it.sc, it.scopeID, e)
	s.freeSlotLocked(it, e)
	var nit *item
	var nctx context.Context
	var nrun RunFunc
	if next && !s.closed && s.used < s.cfg.maxRunning && len(s.reclaimers) == 0 && s.ready.len() > 0 {
		nit = s.popLocked(s.ready.front())
		s.used++
		nctx, nrun = s.prepareRunLocked(nit, nil, e)
	}
	s.dispatchLocked(e)
	s.unlockAndEmit(e)
	*e = emission{}
	emissions.Put(e)
	return nit, nctx, nrun
}

// finishLocked does the bookkeeping common to every terminal transition.
func (s *Supervisor) finishLocked(it *item, now time.Time, e *emission) {
	if s.retireLocked(it, now, e) {
		s.evictLocked(it.owner)
	}
}

// retireLocked is finishLocked without the eviction, which it reports is
// due (settle evicts from its own frame: nested here, the eviction's map
// delete made a new child goroutine's stack grow).
func (s *Supervisor) retireLocked(it *item, now time.Time, e *emission) (evict bool) {
	it.finished = now
	s.settleRunLocked(it.budget)
	it.owner.active--
	e.settled(it)
	if it.detached {
		delete(it.owner.hidden, it)
		s.forgetItemLocked(it)
		return false
	}
	it.owner.pushTerminal(it)
	return true
}

// forgetItemLocked removes a terminal Work from the census; nothing refers
// to it afterwards.
func (s *Supervisor) forgetItemLocked(it *item) {
	it.counts[it.state.index()]--
	it.output, it.mb = "", nil
}

// Eviction classes, evicted in this order.
const (
	evictRead     = iota // completed, result read
	evictUnwanted        // failed or cancelled
	evictUnread          // completed, result not yet read
)

func (it *item) evictClass() int {
	switch {
	case it.state != StateCompleted:
		return evictUnwanted
	case it.read:
		return evictRead
	}
	return evictUnread
}

// evictLocked drops the owner's terminal Work beyond the retention bounds:
// first every Work finished longer ago than the age bound, then, while more
// are kept than the count bound, the oldest finished of the first non-empty
// class: read results, then failed and cancelled Work, then unread results.
// The class scan runs only when the count bound is exceeded.
func (s *Supervisor) evictLocked(os *ownerState) {
	if s.cfg.retainAge > 0 {
		now := s.cfg.clock.Now()
		for f := os.terminal.front(); f != nil && now.Sub(f.finished) > s.cfg.retainAge; f = os.terminal.front() {
			s.evictItemLocked(os, f)
		}
	}
	for os.terminal.len() > s.cfg.retainTerminal {
		c := evictRead
		for os.classes[c] == 0 {
			c++
		}
		it := os.terminal.front()
		for it.evictClass() != c {
			it = it.next
		}
		s.evictItemLocked(os, it)
	}
}

// pushTerminal appends terminal it to os's terminal list.
func (os *ownerState) pushTerminal(it *item) {
	os.terminal.pushBack(it)
	os.classes[it.evictClass()]++
}

// removeTerminal takes it out of os's terminal list.
func (os *ownerState) removeTerminal(it *item) {
	os.terminal.remove(it)
	os.classes[it.evictClass()]--
}

// markRead records that it's result has been read (its eviction class
// changes when it is in its owner's terminal list).
func (it *item) markRead() {
	if it.list == &it.owner.terminal {
		it.owner.classes[evictUnread]--
		it.owner.classes[evictRead]++
	}
	it.read = true
}

func (s *Supervisor) evictItemLocked(os *ownerState, it *item) {
	os.removeTerminal(it)
	delete(os.items, it.ref.ID)
	s.forgetItemLocked(it)
}

// lookupLocked finds a Work visible to o, evicting expired Work first.
// visibleLocked returns o's state, nil when o has none, with its retention
// applied (what the owner operations read).
func (s *Supervisor) visibleLocked(o Owner) *ownerState {
	os := s.owners[o.id]
	if os != nil {
		s.evictLocked(os)
	}
	return os
}

func (s *Supervisor) lookupLocked(o Owner, id string) (*item, error) {
	if err := validOwner(o); err != nil {
		return nil, err
	}
	os := s.visibleLocked(o)
	if os == nil {
		return nil, ErrNotFound
	}
	it := os.items[id]
	if it == nil {
		return nil, ErrNotFound
	}
	return it, nil
}

func (it *item) status() Status {
	return Status{Work: it.ref, TargetLabel: it.target.Label, State: it.state,
		CreatedAt: it.created, StartedAt: it.started, FinishedAt: it.finished,
		ResultAvailable: it.hasOutput, BudgetExhausted: it.budget.exhaustedBudget(),
		ResultRead: it.read, Progress: it.prog.snapshot()}
}

// Status returns the projection of one Work visible to o, or ErrNotFound.
func (s *Supervisor) Status(o Owner, id string) (Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, err := s.lookupLocked(o, id)
	if err != nil {
		return Status{}, err
	}
	return it.status(), nil
}

// List returns at most 50 Works visible to o: unfinished first, then
// finished; within each group newest first (by start order). It returns an
// empty slice for an owner with none.
func (s *Supervisor) List(o Owner) ([]Status, error) {
	if err := validOwner(o); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	os := s.visibleLocked(o)
	if os == nil {
		return []Status{}, nil
	}
	top := topK(os.items, MaxListed, func(a, b *item) bool {
		if at, bt := a.state.Terminal(), b.state.Terminal(); at != bt {
			return !at
		}
		return a.seq > b.seq
	})
	out := make([]Status, len(top))
	for i, it := range top {
		out[i] = it.status()
	}
	return out, nil
}

// Rows returns the boundary status rows for o: at most 12 Works chosen by
// priority, and how many visible Works were left out. The priority is:
// results available and not yet read; failed; running and
// cancel-requested; queued; the rest (results already read, cancelled).
// Within a priority, newest first. Elapsed is measured from start (or
// creation while queued) to now, or to the finish for terminal Work.
// Selection costs O(n log 12) for n visible Works: it does not sort them.
func (s *Supervisor) Rows(o Owner) (rows []Row, more int) {
	if validOwner(o) != nil {
		return nil, 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	os := s.visibleLocked(o)
	if os == nil {
		return nil, 0
	}
	top := topK(os.items, MaxRows, func(a, b *item) bool {
		if pa, pb := a.priority(), b.priority(); pa != pb {
			return pa < pb
		}
		return a.seq > b.seq
	})
	now := s.cfg.clock.Now()
	rows = make([]Row, len(top))
	for i, it := range top {
		rows[i] = Row{ID: it.ref.ID, TargetLabel: it.target.Label, State: it.state,
			Elapsed: it.elapsed(now), ResultAvailable: it.hasOutput}
	}
	return rows, len(os.items) - len(rows)
}

func (it *item) priority() int {
	switch it.state {
	case StateCompleted:
		if it.hasOutput && !it.read {
			return 0
		}
		return 4
	case StateFailed:
		return 1
	case StateRunning, StateCancelRequested:
		return 2
	case StateQueued:
		return 3
	}
	return 4
}

func (it *item) elapsed(now time.Time) time.Duration {
	from := it.started
	if from.IsZero() {
		from = it.created
	}
	if !it.finished.IsZero() {
		now = it.finished
	}
	if d := now.Sub(from); d > 0 {
		return d
	}
	return 0
}

// Result returns the exact output of a completed Work. For failed or
// cancelled Work it returns the Status at once (failure is visible only as
// state). Otherwise it waits until the Work settles, timeout passes (capped
// at 30 s; 0 does not wait) or ctx is done, and returns the Status then, with
// the output if it completed meanwhile. The output is meaningful only when
// the returned Status is completed (an empty output is a valid result). The
// wait is woken by settlement, not by polling. A negative timeout is
// ErrInvalidTimeout.
//
// When o is a child's scope, the waiting child lends its running slot to
// its own descendants for the wait; Result still returns at its timeout or
// ctx end, and a child left without a slot reclaims one as described in
// "Running slots" in the package doc. Once Result has returned a terminal
// answer, the Work keeps no command records (see Send).
func (s *Supervisor) Result(ctx context.Context, o Owner, id string, timeout time.Duration) (Status, string, error) {
	if timeout < 0 {
		return Status{}, "", ErrInvalidTimeout
	}
	timeout = min(timeout, MaxResultWait)
	s.mu.Lock()
	it, err := s.lookupLocked(o, id)
	if err != nil || (timeout == 0 && !it.state.Terminal()) {
		return s.readLocked(it, err)
	}
	if it.state.Terminal() {
		return s.readSettledLocked(o, id, it)
	}
	done := it.doneLocked()
	var e emission
	w := s.lendLocked(o, it, &e)
	s.unlockAndEmit(&e)

	settled := s.wait(ctx, done, timeout)
	if w != nil {
		s.unlend(w, it)
	}
	s.mu.Lock()
	if settled {
		// done closes after the terminal events are delivered.
		return s.readLocked(s.lookupLocked(o, id))
	}
	if it, err := s.lookupLocked(o, id); err == nil && it.state.Terminal() {
		// The wait ended (timeout, ctx) while the Work settled and before
		// its done channel closed.
		return s.readSettledLocked(o, id, it)
	}
	return s.readLocked(s.lookupLocked(o, id))
}

// readSettledLocked answers Result for terminal it and releases s.mu.
// The Work is settled, perhaps with its events still being delivered:
// their emission holds the Work's emit lock from before s.mu was released
// until they are, so a terminal answer is never ahead of the observer.
//
// Emissions take a Work's emit lock before they release s.mu: when it is
// free while s.mu is held, no emission of the Work is under way and the
// answer is read at once.
func (s *Supervisor) readSettledLocked(o Owner, id string, it *item) (Status, string, error) {
	if it.emitMu.TryLock() {
		it.emitMu.Unlock()
		return s.readLocked(it, nil)
	}
	s.mu.Unlock()
	it.emitMu.Lock()
	it.emitMu.Unlock()
	s.mu.Lock()
	return s.readLocked(s.lookupLocked(o, id))
}

// waitTimers are the system clock's result-wait timers, reused: since Go
// 1.23 a stopped timer delivers no stale tick after Reset.
var waitTimers sync.Pool

// wait returns when done is closed (reporting true), timeout passes or ctx
// is done.
func (s *Supervisor) wait(ctx context.Context, done <-chan struct{}, timeout time.Duration) (closed bool) {
	if _, system := s.cfg.clock.(systemClock); system {
		t, _ := waitTimers.Get().(*time.Timer)
		if t == nil {
			t = time.NewTimer(timeout)
		} else {
			t.Reset(timeout)
		}
		select {
		case <-done:
			closed = true
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		waitTimers.Put(t)
		return closed
	}
	expired := make(chan struct{})
	stop := s.cfg.clock.AfterFunc(timeout, func() { close(expired) })
	select {
	case <-done:
		closed = true
	case <-expired:
	case <-ctx.Done():
	}
	stop()
	return closed
}

// readLocked answers Result and releases s.mu.
func (s *Supervisor) readLocked(it *item, err error) (Status, string, error) {
	if err != nil {
		s.mu.Unlock()
		return Status{}, "", err
	}
	st := it.status()
	if st.State.Terminal() {
		it.dropCommands()
	}
	if !it.hasOutput {
		s.mu.Unlock()
		return st, "", nil
	}
	out := it.output
	var e emission
	if !it.read {
		it.markRead()
		if !s.nop { // the event is only the Observer's: no clock read for the no-op one
			e.add(it, Event{Type: EventResultRead, Time: s.cfg.clock.Now(), Bytes: len(out)})
		}
	}
	s.unlockAndEmit(&e)
	return st, out, nil
}

// Cancel asks for a Work to stop. Queued Work is cancelled before it runs;
// running Work becomes cancel-requested and its context is cancelled (the
// child stops cooperatively; completion or an unrelated failure may still
// win); a repeated request is accepted again with no change; terminal Work
// is not accepted.
func (s *Supervisor) Cancel(o Owner, id string) (CancelReceipt, error) {
	var e emission
	s.mu.Lock()
	it, err := s.lookupLocked(o, id)
	if err != nil {
		s.mu.Unlock()
		return CancelReceipt{}, err
	}
	now := s.cfg.clock.Now()
	accepted := s.cancelLocked(it, now, errCancelRequested, &e)
	r := CancelReceipt{WorkID: id, Accepted: accepted, State: it.state, AcceptedAt: now}
	s.unlockAndEmit(&e)
	return r, nil
}

func (s *Supervisor) cancelLocked(it *item, now time.Time, cause error, e *emission) bool {
	switch it.state {
	case StateQueued:
		os := it.owner
		os.queue.remove(it)
		s.queuedBelowLocked(os, -1)
		if os.queue.len() == 0 && os.inRing {
			s.ready.remove(os)
		}
		it.run = nil
		s.transition(it, StateCancelled, e, now).Duration = now.Sub(it.created)
		s.finishLocked(it, now, e)
		return true
	case StateRunning:
		s.transition(it, StateCancelRequested, e, now)
		it.cancel(cause)
		return true
	case StateCancelRequested:
		return true
	}
	return false
}

// Detach removes a Work from o's view without cancelling it: afterwards o
// gets ErrNotFound for it, and its execution continues. Detaching hides the
// Work and nothing else: until it is terminal it still counts against o's
// outstanding limit, and it is cancelled like o's visible Work by o's
// Release, by the end of the child whose scope o is, and by Close; the
// Observer sees the rest of its events. Its command records are dropped at
// once, and it is forgotten entirely once it is terminal.
func (s *Supervisor) Detach(o Owner, id string) (DetachReceipt, error) {
	var e emission
	s.mu.Lock()
	it, err := s.lookupLocked(o, id)
	if err != nil {
		s.mu.Unlock()
		return DetachReceipt{}, err
	}
	s.detachLocked(it, &e)
	s.unlockAndEmit(&e)
	return DetachReceipt{ID: id}, nil
}

func (s *Supervisor) detachLocked(it *item, e *emission) {
	os := it.owner
	delete(os.items, it.ref.ID)
	it.detached = true
	it.dropCommands()
	e.add(it, Event{Type: EventDetached, Time: s.cfg.clock.Now()})
	if it.list == &os.terminal {
		os.removeTerminal(it)
		s.forgetItemLocked(it)
		return
	}
	if os.hidden == nil {
		os.hidden = make(map[*item]struct{})
	}
	os.hidden[it] = struct{}{}
}

// Release detaches all of o's visible Work, cancels every unfinished Work
// of o, visible or detached (queued Work is cancelled, running Work becomes
// cancel-requested and is forgotten when it ends) and forgets o (including
// its starts budget). Call it when the agent instance that o stands for is
// done. A child's own scope is released when the child ends. Release of an
// invalid owner does nothing.
func (s *Supervisor) Release(o Owner) {
	if validOwner(o) != nil {
		return
	}
	var e emission
	s.mu.Lock()
	if os := s.owners[o.id]; os != nil {
		s.releaseLocked(os, &e)
	}
	s.forgetPoolLocked(o.id)
	s.closeSubscriptionsLocked(o.id, false)
	s.unlockAndEmit(&e)
}

// releaseLocked detaches every Work visible to os, then cancels the
// unfinished ones, and cancels os's detached Work. Detaching first
// matters: cancelling queued Work of a still-attached owner would retire it
// into the terminal list and could evict other items mid-release, so which
// items got a detached event would depend on map order.
func (s *Supervisor) releaseLocked(os *ownerState, e *emission) {
	now := s.cfg.clock.Now()
	for _, it := range os.items {
		s.detachLocked(it, e)
		s.cancelLocked(it, now, errCancelRequested, e)
	}
	for it := range os.hidden {
		s.cancelLocked(it, now, errCancelRequested, e)
	}
	delete(s.owners, os.id)
	if os.sc != nil && os.sc.os == os {
		os.sc.os = nil
	}
	s.closeSubscriptionsLocked(os.id, false)
}

// Close stops admitting Work (later starts fail with ErrClosed), cancels
// every queued and running Work (visible or detached) and every foreground
// call, and waits until every child goroutine and foreground call has
// returned or ctx is done, whichever comes first; in the latter case it
// returns ctx's error and the remaining goroutines exit when their children
// return (Close itself leaves no goroutine behind). When nothing is running
// Close returns nil, even with a ctx that has already ended. Owner
// operations keep working on what is left. Close is idempotent. Every
// Subscription is closed when Close returns.
//
// A child cannot close its own Supervisor: Close called by one of its
// children, or by a goroutine a child started, fails with ErrCloseFromChild
// and changes nothing, where it would otherwise wait for the caller itself.
// The caller is recognised by ctx when it carries an Execution of this
// Supervisor, and otherwise, whatever ctx it passes, by its goroutine's
// ProfileLabel (read from one goroutine profile, only while children run).
// A child that replaces its goroutine's profiler labels (pprof.Do or
// pprof.SetGoroutineLabels with a context that lacks the label) and then
// closes with a context not derived from its own is not recognised.
func (s *Supervisor) Close(ctx context.Context) error {
	if s.closedFromChild(ctx) {
		return ErrCloseFromChild
	}
	defer func() {
		s.mu.Lock()
		s.closeSubscriptionsLocked("", true)
		s.mu.Unlock()
	}()
	var e emission
	s.mu.Lock()
	first := !s.closed
	s.closed = true
	s.closing.Store(true)
	now := s.cfg.clock.Now()
	for os := s.ready.front(); os != nil; os = s.ready.front() {
		for q := os.queue.front(); q != nil; q = os.queue.front() {
			s.cancelLocked(q, now, errClosed, &e)
		}
	}
	for it := s.running.front(); it != nil; it = it.next {
		s.cancelLocked(it, now, errClosed, &e)
	}
	for fg := range s.foreground {
		fg.cancel(errClosed)
	}
	s.stopDeadlineTimerLocked()
	s.releaseReclaimersLocked()
	s.signalIdleLocked()
	s.unlockAndEmit(&e)
	if first && s.unwatch != nil {
		s.unwatch()
	}
	select {
	case <-s.idle:
		return nil
	default:
	}
	select {
	case <-s.idle:
		return nil
	case <-ctx.Done():
		// With no child still running, the goroutines left are only
		// delivering their Works' last events: nothing to abandon.
		s.mu.Lock()
		settling := s.running.len() == 0 && len(s.foreground) == 0
		s.mu.Unlock()
		if settling {
			<-s.idle
			return nil
		}
		return ctx.Err()
	}
}
