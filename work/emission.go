package work

import (
	"sync"
	"time"

	"github.com/agentwork/agentwork/work/observe"
)

// emission is a batch of events gathered under s.mu and delivered after it
// is released, in order, holding each Work's emit lock so that events of one
// Work never interleave or reorder. Each lock is taken before s.mu is
// released; a Work whose child starts on a goroutine of its own within the
// critical section has its lock taken before the child starts (runLocked,
// item.emitHeld), so that nothing the child reports overtakes the events
// gathered with its start.
//
// The first two events (a Start's queued and running, a settlement's
// terminal event and the next Work's running) live in the emission's own
// arrays and the overflow in separate slices: no field points into the
// emission itself, so that it stays on the caller's stack and the common
// case allocates nothing.
type emission struct {
	n       int // events gathered: the first len(evs) in its/evs, the rest in moreIts/moreEvs
	its     [2]*item
	evs     [2]observe.Event
	moreIts []*item
	moreEvs []observe.Event
	woken   *waiter         // waiters of settled Works, whose tokens are sent after the events (waiter.go)
	notices []pendingNotice // sent after the events are delivered
	// nop: the events go to the no-op Observer, so none is kept (evs[0]
	// is a scratch entry push returns); its Works are (for their emit
	// locks), and so are its waiters and notices.
	nop bool
	// now is the clock's reading for the critical section that gathers
	// the emission (zero until read): its events share it.
	now time.Time
}

// nowLocked returns the time of the critical section gathering e, reading
// the clock once per section.
func (s *Engine) nowLocked(e *emission) time.Time {
	if e.now.IsZero() {
		e.now = s.clock.Now()
	}
	return e.now
}

// emissions are settle's emissions, reused (putEmission).
var emissions = sync.Pool{New: func() any { return new(emission) }}

// maxPooledOverflow bounds the overflow a pooled emission keeps for reuse.
const maxPooledOverflow = 64

// getEmission returns an emission from emissions, for s's Observer.
func (s *Engine) getEmission() *emission {
	e := emissions.Get().(*emission)
	e.nop = s.nop
	return e
}

// putEmission empties e and puts it back in emissions, keeping a small
// overflow's capacity. It clears what holds Works, waiters and
// Subscriptions; events are cleared as they are pushed (they hold strings
// only).
func putEmission(e *emission) {
	clear(e.its[:min(e.n, len(e.its))])
	e.moreIts, e.moreEvs = reuse(e.moreIts, true), reuse(e.moreEvs, false)
	e.notices = reuse(e.notices, true)
	e.n, e.woken, e.now = 0, nil, time.Time{}
	emissions.Put(e)
}

// reuse returns s emptied (and cleared, with clearing), or nil when it is
// large.
func reuse[T any](s []T, clearing bool) []T {
	if cap(s) > maxPooledOverflow {
		return nil
	}
	if clearing {
		clear(s)
	}
	return s[:0]
}

// add appends ev, an event of it, to e. The settle path uses push, which
// builds the event in place (an Event is 272 bytes: every one built on a
// child goroutine's stack makes its frames larger).
//
//go:noinline
func (e *emission) add(it *item, ev observe.Event) {
	p := e.push(it, ev.Type, ev.Time)
	if e.nop {
		return
	}
	ev.WorkID, ev.Owner, ev.Depth, ev.Target, ev.Kind = p.WorkID, p.Owner, p.Depth, p.Target, p.Kind
	*p = ev
}

// push appends an event of it of type typ at time t to e and returns it,
// its Work's fields set, for the caller to complete before the next push.
func (e *emission) push(it *item, typ observe.EventType, t time.Time) *observe.Event {
	n := e.n
	e.n++
	if n < len(e.its) {
		e.its[n] = it
	} else {
		e.moreIts = append(e.moreIts, it)
	}
	if e.nop {
		return &e.evs[0] // read by no one: a scratch entry
	}
	var ev *observe.Event
	if n < len(e.evs) {
		ev = &e.evs[n]
	} else {
		e.moreEvs = append(e.moreEvs, observe.Event{})
		ev = &e.moreEvs[len(e.moreEvs)-1]
	}
	*ev = observe.Event{Type: typ, Time: t, WorkID: it.id(), Owner: it.owner.id, Depth: it.owner.depth,
		Target: it.target.Label, Kind: it.target.Kind} // a pooled emission's events are not cleared
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
func (e *emission) event(i int) *observe.Event {
	if i < len(e.evs) {
		return &e.evs[i]
	}
	return &e.moreEvs[i-len(e.evs)]
}

// unlockAndEmit releases s.mu and delivers e. Must be called with s.mu held.
//
// It runs on child goroutines as they settle: what it does only now and
// then (many Works at once, an Observer that is not the no-op one,
// notices) is in functions of their own, so that its own frame stays
// small and settling fits in a new goroutine's stack.
func (s *Engine) unlockAndEmit(e *emission) {
	var buf [4]*item
	locked := buf[:0]
	if e.n <= 16 {
		for i := range e.n {
			if it := e.item(i); !containsItem(locked, it) {
				lockEmit(it)
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
	if e.woken != nil {
		wake(e.woken)
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
			lockEmit(it)
			locked = append(locked, it)
		}
	}
	return locked
}

// deliver hands e's events to the Observer and sends its notices.
//
//go:noinline
func (s *Engine) deliver(e *emission) {
	if !s.nop {
		for i := range e.n {
			s.observer.Event(e.item(i).ctx, *e.event(i))
		}
	}
	for _, n := range e.notices {
		n.sub.send(n.n)
	}
}

// lockEmit takes it's emit lock for an emission, unless runLocked took it
// already in the same critical section. Must be called with s.mu held.
func lockEmit(it *item) {
	if it.emitHeld {
		it.emitHeld = false
		return
	}
	it.emitMu.Lock()
}

func has(m map[*item]struct{}, it *item) bool {
	_, ok := m[it]
	return ok
}

func containsItem(its []*item, it *item) bool {
	for _, x := range its {
		if x == it {
			return true
		}
	}
	return false
}
