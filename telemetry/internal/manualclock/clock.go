// Package manualclock is a work.Clock that moves only when a test says so,
// for the telemetry tests: durations, queue waits and deadlines become exact
// values instead of whatever the machine took.
package manualclock

import (
	"sort"
	"sync"
	"time"
)

// Clock is a manual work.Clock. Now starts at the time given to New and
// changes only through Advance. Timers registered with AfterFunc fire, each
// on its own goroutine, when Advance moves the clock to or past their due
// time. It is safe for concurrent use.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*timer
}

type timer struct {
	due  time.Time
	f    func()
	done bool
}

// New returns a Clock reading start.
func New(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc calls f on its own goroutine once the clock has been advanced by
// d, unless stop is called first; stop reports whether it prevented the
// call.
func (c *Clock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	c.mu.Lock()
	t := &timer{due: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if t.done {
			return false
		}
		t.done = true
		c.remove(t)
		return true
	}
}

// Advance moves the clock forward by d and starts every timer that is due,
// earliest first. It returns a function that waits until the started timer
// functions have returned.
func (c *Clock) Advance(d time.Duration) (wait func()) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*timer
	for _, t := range c.timers {
		if !t.isDue(c.now) {
			continue
		}
		due = append(due, t)
	}
	for _, t := range due {
		t.done = true
		c.remove(t)
	}
	c.mu.Unlock()
	sort.SliceStable(due, func(i, j int) bool { return due[i].due.Before(due[j].due) })
	var wg sync.WaitGroup
	for _, t := range due {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.f()
		}()
	}
	return wg.Wait
}

func (t *timer) isDue(now time.Time) bool { return !t.due.After(now) }

func (c *Clock) remove(t *timer) {
	for i, x := range c.timers {
		if x == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			return
		}
	}
}
