package work

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// defaultNoticeBuffer is a Subscription's buffer when Subscribe is given
// none.
const defaultNoticeBuffer = 64

// Notice is a content-free notice: a Work visible to the subscribed owner
// reached a terminal state (NoticeSettled), started to await approval
// (NoticeApproval: read the request with Approvals.Pending), or had an
// update accepted (NoticeUpdate: read it with Updater.Updates). It
// carries no input, output, failure text, guidance or update value.
type Notice struct {
	// Kind says what the notice reports: a settlement (the zero value), a
	// request for approval or an accepted update. A settlement notice is never dropped to make
	// room for a notice of another kind.
	Kind            NoticeKind
	WorkID          string
	Target          string // the target label
	State           State  // completed, failed or cancelled (queued for NoticeApproval, the Work's state for NoticeUpdate)
	ResultAvailable bool   // completed, with its output held: read it with Result
	Seq             int    // NoticeUpdate: the update's sequence number
	Bytes           int    // NoticeUpdate: the update's encoded size
	Time            time.Time
}

// Subscription delivers one owner's completion notices. It is safe for
// concurrent use. One not made by Subscribe or NewSubscription (zero or
// nil) is an ended Subscription: C returns a closed channel and Close does
// nothing.
type Subscription struct {
	s       *Supervisor
	owner   string
	ch      chan Notice
	dropped atomic.Uint64

	mu     sync.Mutex // guards closed and sends on ch
	closed bool

	onClose   func() // for a Subscription another Engine feeds
	closeOnce sync.Once
}

// Subscribe returns a Subscription to the completion notices of o: one
// Notice for each Work visible to o that reaches a terminal state from now
// on (detached Work, and Work cancelled by Release, is no longer visible and
// has none), and one NoticeApproval for each Work visible to o that starts
// to await approval (Spec.NeedsApproval), and one NoticeUpdate for each
// update such a Work's child reports and that is accepted (Spec.Updates).
// Notices wait in a buffer of
// buffer entries (defaultNoticeBuffer when buffer < 1); the engine never
// waits for the reader: when the buffer is full the notice is dropped and
// counted (Dropped), except that a settlement notice is never dropped to
// make room for a notice of another kind: it takes the place of the
// oldest buffered notice of another kind (NoticeApproval or NoticeUpdate)
// instead, which is dropped and counted. A reader that must
// not miss a settlement treats a Notice as a wake-up and reads the owner's
// state with List or Status.
//
// The Subscription's channel is closed by its Close, by Release of o (and
// the end of a child's scope, for a scope owner, whether or not it started
// Work) and by the Supervisor's Close and Shutdown. Subscribe fails with
// ErrInvalidOwner, ErrClosed, or ErrScopeEnded for a child's scope that
// has ended.
// An owner may have several Subscriptions.
func (s *Supervisor) Subscribe(ctx context.Context, o Owner, buffer int) (*Subscription, error) {
	if s.uninitialized() {
		return nil, ErrNotInitialized
	}
	if err := validOwner(o); err != nil {
		return nil, err
	}
	if buffer < 1 {
		buffer = defaultNoticeBuffer
	}
	sub := &Subscription{s: s, owner: o.id, ch: make(chan Notice, buffer)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if o.sc != nil && o.sc.ended {
		return nil, ErrScopeEnded
	}
	if s.subs == nil {
		s.subs = make(map[string]map[*Subscription]struct{})
	}
	m := s.subs[o.id]
	if m == nil {
		m = make(map[*Subscription]struct{})
		s.subs[o.id] = m
	}
	m[sub] = struct{}{}
	return sub, nil
}

// C returns the channel the notices arrive on. It is closed when the
// Subscription ends.
func (sub *Subscription) C() <-chan Notice {
	if sub == nil || sub.ch == nil { // not made by Subscribe or NewSubscription
		return closedNotices
	}
	return sub.ch
}

// closedNotices is the channel of a Subscription not made by Subscribe or
// NewSubscription: closed, so that its reader never waits.
var closedNotices = func() chan Notice {
	ch := make(chan Notice)
	close(ch)
	return ch
}()

// Dropped returns how many notices were dropped because the buffer was
// full.
func (sub *Subscription) Dropped() uint64 {
	if sub == nil {
		return 0
	}
	return sub.dropped.Load()
}

// Close ends the Subscription and closes its channel. It is idempotent.
func (sub *Subscription) Close() {
	if sub == nil || sub.ch == nil { // not made by Subscribe or NewSubscription: nothing to close
		return
	}
	if sub.s == nil { // fed by another Engine (NewSubscription)
		sub.closeExternal()
		return
	}
	sub.s.mu.Lock()
	sub.s.unsubscribeLocked(sub)
	sub.s.mu.Unlock()
}

func (s *Supervisor) unsubscribeLocked(sub *Subscription) {
	if m := s.subs[sub.owner]; m != nil {
		delete(m, sub)
		if len(m) == 0 {
			delete(s.subs, sub.owner)
		}
	}
	sub.mu.Lock()
	if !sub.closed {
		sub.closed = true
		close(sub.ch)
	}
	sub.mu.Unlock()
}

// closeSubscriptionsLocked ends the Subscriptions of the owner id, or all
// of them when all is set.
func (s *Supervisor) closeSubscriptionsLocked(id string, all bool) {
	if all {
		for _, m := range s.subs {
			for sub := range m {
				s.unsubscribeLocked(sub)
			}
		}
		return
	}
	for sub := range s.subs[id] {
		s.unsubscribeLocked(sub)
	}
}

// endScopeLocked ends the child's scope sc, whose owner id is id: it
// admits no more Work, its Work is released, and its Subscriptions are
// closed (also when it never started Work and so has no registry entry).
func (s *Supervisor) endScopeLocked(sc *scope, id string, e *emission) {
	sc.ended = true
	if os := sc.os; os != nil && s.ownerLocked(os.id) == os {
		s.releaseLocked(os, e)
	}
	s.closeSubscriptionsLocked(id, false)
}

// pendingNotice is a notice gathered under s.mu and sent after it is
// released.
type pendingNotice struct {
	sub *Subscription
	n   Notice
}

// settledLocked records that it has just become terminal: progress events
// stop and its owner's subscribers get a notice (sent after s.mu is
// released, with the emission).
func (s *Supervisor) settledLocked(it *item, now time.Time, e *emission) {
	it.prog.ended.Store(true)
	if it.upd != nil {
		it.upd.endLocked() // no more updates, no open question (update_work.go)
	}
	if it.detached || len(s.subs) == 0 {
		return
	}
	if subs := s.subs[it.owner.id]; len(subs) > 0 {
		noticeLocked(subs, it, now, e)
	}
}

// noticeLocked queues a notice of terminal it for each of subs.
//
//go:noinline
func noticeLocked(subs map[*Subscription]struct{}, it *item, now time.Time, e *emission) {
	for sub := range subs {
		e.notices = append(e.notices, pendingNotice{sub, Notice{WorkID: it.id(),
			Target: it.target.Label, State: it.state(), ResultAvailable: it.hasOutput, Time: now}})
	}
}

// send delivers n without waiting. When the buffer is full a settlement
// notice takes the place of the oldest buffered notice of another kind (a
// NoticeApproval or a NoticeUpdate), which is dropped; any other notice, or a settlement
// that finds only settlements buffered, is dropped. Every drop is counted.
func (sub *Subscription) send(n Notice) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.closed {
		return
	}
	select {
	case sub.ch <- n:
		return
	default:
	}
	if n.Kind == NoticeSettled {
		sub.evictLocked()
	}
	select {
	case sub.ch <- n:
	default:
		sub.dropped.Add(1)
	}
}

// evictLocked drops the oldest buffered notice that is not a settlement,
// if there is one, keeping the order of the others. sub.mu is held, so no
// other notice is sent meanwhile: the buffer is taken out and put back
// (the reader only ever takes notices out, so putting back never blocks).
// A reader receiving at the same moment may get a notice taken out before
// one that was behind it: notices are wake-ups, and this happens only
// when the buffer is full.
//
//go:noinline
func (sub *Subscription) evictLocked() {
	buf := make([]Notice, 0, len(sub.ch))
drain:
	for {
		select {
		case x := <-sub.ch:
			buf = append(buf, x)
		default:
			break drain
		}
	}
	evicted := false
	for _, x := range buf {
		if !evicted && x.Kind != NoticeSettled {
			evicted = true
			sub.dropped.Add(1)
			continue
		}
		sub.ch <- x
	}
}

// Settled returns every Work visible to o that is terminal, oldest
// settlement first, with no limit on their number (unlike List): what a
// Subscription's reader reads after a wake-up so that it misses none. The
// visible terminal Works are bounded by the retention (WithRetention). It
// returns an empty slice for an owner with none.
func (s *Supervisor) Settled(ctx context.Context, o Owner) ([]Status, error) {
	if s.uninitialized() {
		return nil, ErrNotInitialized
	}
	if err := validOwner(o); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	os := s.visibleLocked(o)
	if os == nil {
		return []Status{}, nil
	}
	out := make([]Status, 0, os.terminal.len())
	for it := os.terminal.front(); it != nil; it = it.next {
		out = append(out, it.status())
	}
	return out, nil
}

// Live reports whether o has visible Work that is not terminal. Its error
// is ErrNotInitialized for a Supervisor not made by New and ErrInvalidOwner
// for the zero Owner; otherwise it is nil.
func (s *Supervisor) Live(ctx context.Context, o Owner) (bool, error) {
	if s.uninitialized() {
		return false, ErrNotInitialized
	}
	if err := validOwner(o); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	os := s.ownerLocked(o.id)
	return os != nil && os.items.len() > os.terminal.len(), nil
}
