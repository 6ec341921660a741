package work

import (
	"context"
	"time"
)

// A waiter is a goroutine waiting for a Work to settle: a Result, or
// Shutdown's drain. It waits for one token on its channel, sent once it
// is woken: after the Work's terminal events are delivered (by the
// emission that settles it), or at its deadline. A Work's waiters are a list in the item, taken out as
// a whole when it settles.
//
// On the system clock a Result's deadline is kept in a min-heap (s.waits,
// guarded by s.mu) under one timer armed for the earliest, as running
// Works' deadlines are (deadline.go): waiting allocates nothing (the
// engine keeps a few waiters for reuse) and touches no runtime timer
// in the common case. Other clocks keep a timer per wait (their tests
// count timers).
type waiter struct {
	ch      chan struct{} // buffered (1): the token
	it      *item         // the Work it waits for
	next    *waiter       // in it.waiters; once woken, in the emission that sends its token; then in s.spareWaiters
	at      time.Duration // its deadline since waitEpoch (pooled), else its timeout
	idx     int32         // 1 + its index in s.waits; 0 when not in it
	woken   bool          // out of it.waiters: its token is sent, or on its way
	settled bool          // woken because the Work settled
	pooled  bool          // a Result's on the system clock, reused (else at is a timeout)
}

// waitEpoch is what the system clock's wait deadlines count from.
var waitEpoch = time.Now()

// maxSpareWaiters bounds the waiters an engine keeps for reuse
// (s.spareWaiters, guarded by s.mu): a waiter goes back only once nothing
// refers to it and its token was received (putWaiterLocked).
const maxSpareWaiters = 16

// addWaiterLocked adds w, a waiter for it, to its list.
func (it *item) addWaiterLocked(w *waiter) {
	w.it, w.next = it, it.waiters
	it.waiters = w
}

// removeWaiterLocked takes w, not woken, out of its Work's list and the
// deadline heap.
func (s *Engine) removeWaiterLocked(w *waiter) {
	for p := &w.it.waiters; *p != nil; p = &(*p).next {
		if *p == w {
			*p = w.next
			break
		}
	}
	w.next = nil
	s.removeWaitLocked(w)
}

// wakeWaitersLocked takes settled it's waiters out of its list, for e to
// send their tokens once its events are delivered.
func (s *Engine) wakeWaitersLocked(it *item, e *emission) {
	for w := it.waiters; w != nil; {
		next := w.next
		w.woken, w.settled = true, true
		s.removeWaitLocked(w)
		w.next, e.woken = e.woken, w
		w = next
	}
	it.waiters = nil
}

// wake sends the tokens of woken, a list of woken waiters.
func wake(woken *waiter) {
	for w := woken; w != nil; {
		next := w.next // w may be reused once its token is received
		w.ch <- struct{}{}
		w = next
	}
}

// newWaiterLocked registers a Result's waiter for it, which is not
// settled, due in timeout (> 0).
func (s *Engine) newWaiterLocked(it *item, timeout time.Duration) *waiter {
	if _, system := s.clock.(systemClock); !system {
		// Not reused: its timer's function (await) may still hold it.
		w := &waiter{ch: make(chan struct{}, 1), at: timeout}
		it.addWaiterLocked(w)
		return w
	}
	w := s.spareWaiters
	if w != nil {
		s.spareWaiters, w.next = w.next, nil
		s.nSpareWaiters--
	} else {
		w = &waiter{ch: make(chan struct{}, 1), pooled: true}
	}
	it.addWaiterLocked(w)
	s.addWaitLocked(w, time.Since(waitEpoch)+timeout)
	return w
}

// putWaiterLocked keeps w, which await is done with, for reuse (a
// Result's, on the system clock).
func (s *Engine) putWaiterLocked(w *waiter) {
	if !w.pooled || s.nSpareWaiters >= maxSpareWaiters {
		return
	}
	*w = waiter{ch: w.ch, pooled: true, next: s.spareWaiters}
	s.spareWaiters = w
	s.nSpareWaiters++
}

func noStop() bool { return false }

// await waits without s.mu for the token of w (newWaiterLocked), or for
// ctx to end, and reports whether w's Work settled: then its events are
// delivered. Nothing but the caller refers to w afterwards, and its token,
// if one was sent, was received: the caller gives it back with
// putWaiterLocked.
func (s *Engine) await(ctx context.Context, w *waiter) (settled bool) {
	stop := noStop
	if !w.pooled {
		stop = s.clock.AfterFunc(w.at, func() {
			s.mu.Lock()
			if w.woken {
				s.mu.Unlock()
				return
			}
			s.removeWaiterLocked(w)
			w.woken = true
			s.mu.Unlock()
			w.ch <- struct{}{}
		})
	}
	received := true
	if done := ctx.Done(); done == nil {
		<-w.ch
	} else {
		select {
		case <-w.ch:
		case <-done:
			s.mu.Lock()
			if w.woken {
				s.mu.Unlock()
				<-w.ch // woken meanwhile: its token is on its way
			} else {
				s.removeWaiterLocked(w)
				w.woken = true
				s.mu.Unlock()
				received = false
			}
		}
	}
	stop()
	return received && w.settled
}

// addWaitLocked adds w, due at (since waitEpoch), to the deadline heap,
// arming the timer when it is the new earliest.
func (s *Engine) addWaitLocked(w *waiter, at time.Duration) {
	w.at = at
	heapPush(&s.waits, w)
	if s.waitAt == 0 || at < s.waitAt {
		s.armWaitLocked(at)
	}
}

func (s *Engine) armWaitLocked(at time.Duration) {
	s.waitAt = at
	d := at - time.Since(waitEpoch)
	if s.waitTimer == nil {
		s.waitTimer = time.AfterFunc(d, s.expireWaits)
		return
	}
	s.waitTimer.Reset(d)
}

// removeWaitLocked takes w out of the deadline heap, if it is there. As
// with deadlines, the timer stays armed (a wait after another touches it
// only when it is due earlier), unless the engine is closed and no
// wait is left.
func (s *Engine) removeWaitLocked(w *waiter) {
	i := int(w.idx) - 1
	if i < 0 {
		return
	}
	heapRemove(&s.waits, i)
	s.stopWaitTimerLocked()
}

// stopWaitTimerLocked stops the wait timer of a closed engine with no
// wait left, so that no timer holds the engine after Close.
func (s *Engine) stopWaitTimerLocked() {
	if len(s.waits) == 0 && s.closed && s.waitAt != 0 {
		s.waitTimer.Stop()
		s.waitAt = 0
	}
}

// expireWaits runs when the wait timer fires: it wakes every waiter whose
// deadline has passed and re-arms for the next.
func (s *Engine) expireWaits() {
	var woken *waiter
	s.mu.Lock()
	s.waitAt = 0
	now := time.Since(waitEpoch)
	for len(s.waits) > 0 && s.waits[0].at <= now {
		w := s.waits[0]
		s.removeWaiterLocked(w)
		w.woken = true
		w.next, woken = woken, w
	}
	if len(s.waits) > 0 {
		s.armWaitLocked(s.waits[0].at)
	}
	s.mu.Unlock()
	wake(woken)
}

// heapBefore and setHeapIdx place a waiter in the wait heap.
func (w *waiter) heapBefore(o *waiter) bool { return w.at < o.at }
func (w *waiter) setHeapIdx(i int32)        { w.idx = i }
