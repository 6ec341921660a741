// Package fakeclock is a hand-driven clock for tests. Its Clock satisfies
// work.Clock (Now and AfterFunc) without importing it.
//
// Time moves only when a test calls Advance or Set. Functions scheduled with
// AfterFunc run synchronously, on the goroutine that moves the clock, in
// deadline order (ties in the order they were scheduled), each seeing Now
// equal to its own deadline. BlockUntil lets a test wait, without polling,
// until the code under test has scheduled a given number of timers.
package fakeclock

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// Clock is a fake clock. Create one with New; it is safe for concurrent use.
type Clock struct {
	mu     sync.Mutex
	cond   sync.Cond // signalled whenever the set of pending timers changes
	now    time.Time
	seq    uint64
	timers timerHeap
}

// New returns a Clock reading start.
func New(start time.Time) *Clock {
	c := &Clock{now: start}
	c.cond.L = &c.mu
	return c
}

// Now returns the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f to run once the clock has moved d past now. A
// timer with d <= 0 is due at once: it runs on the next Advance or Set
// (Advance(0) will do). stop cancels the timer and reports whether it did so
// before f was started.
func (c *Clock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &timer{at: c.now.Add(max(d, 0)), seq: c.seq, f: f}
	heap.Push(&c.timers, t)
	c.cond.Broadcast()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if t.index < 0 {
			return false
		}
		heap.Remove(&c.timers, t.index)
		c.cond.Broadcast()
		return true
	}
}

// Advance moves the clock forward by d (negative d is treated as 0) and runs
// every timer that falls due, in deadline order, before it returns.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.runUntilLocked(c.now.Add(max(d, 0)))
}

// Set moves the clock to t. Moving forward runs the timers that fall due,
// as Advance does; moving backward runs none.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	if t.Before(c.now) {
		c.now = t
		c.mu.Unlock()
		return
	}
	c.runUntilLocked(t)
}

// runUntilLocked runs due timers up to target, then sets now to target and
// unlocks. The lock is released while each function runs, so it may use
// the clock (schedule, stop, read Now).
func (c *Clock) runUntilLocked(target time.Time) {
	for len(c.timers) > 0 && !c.timers[0].at.After(target) {
		t := heap.Pop(&c.timers).(*timer)
		if t.at.After(c.now) {
			c.now = t.at
		}
		c.cond.Broadcast()
		c.mu.Unlock()
		t.f()
		c.mu.Lock()
	}
	if target.After(c.now) {
		c.now = target
	}
	c.mu.Unlock()
}

// Pending returns the number of timers scheduled and not yet run or stopped.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// BlockUntil waits until at least n timers are pending.
func (c *Clock) BlockUntil(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.timers) < n {
		c.cond.Wait()
	}
}

// BlockUntilContext waits until at least n timers are pending or ctx is
// done, and returns ctx's error in the latter case.
func (c *Clock) BlockUntilContext(ctx context.Context, n int) error {
	stop := context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.timers) < n {
		if err := ctx.Err(); err != nil {
			return err
		}
		c.cond.Wait()
	}
	return nil
}

type timer struct {
	at    time.Time
	seq   uint64
	f     func()
	index int // position in the heap; -1 once popped or removed
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *timerHeap) Push(x any) {
	t := x.(*timer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	t.index = -1
	*h = old[:len(old)-1]
	return t
}
