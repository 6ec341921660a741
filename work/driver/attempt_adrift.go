package driver

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// ClassUnreachable is the class of an attempt whose Worker lived but did
// not get it back to its service within the rejoin window, and cancelled
// its child (Adrift).
const ClassUnreachable = "unreachable"

// ErrUnreachable is the cause Adrift cancels an attempt's child with: no
// take-back came within the window, or the Worker stopped first.
var ErrUnreachable = errors.New("agentwork: the attempt was not taken back within the rejoin window")

// Adrift is where a durable engine's Worker watches the attempts it
// holds (Held) whose service lost them: the attempt's activity or step
// ended while its child ran on (a server restart, a network cut). Each
// watch waits for the Work to take its attempt back (the runners' rejoin);
// once the service answers again, a window without that cancels the
// child, and so does the Worker's stop. Keep holds a returned attempt's
// outcome for a take-back, as long after the service answers again as
// the service was found away. The zero value is ready; an Adrift is safe
// for concurrent use.
type Adrift struct {
	mu       sync.Mutex // guards stopped and stopping, orders wg's Go before its Wait
	stopped  bool
	stopping chan struct{}
	wg       sync.WaitGroup
	tick     time.Duration // between two checks of a watch; 0: a second
	// unanswered is when a watch last found the service not answering
	// (Unix ns; 0: never): Keep reads it.
	unanswered atomic.Int64
}

// Watch watches one attempt adrift on a goroutine of its own, checking
// once a second: taken counts the times the Work took the attempt back
// (a change from its value now ends the watch: the attempt is attached
// again), done is closed when its child returned (the watch ends),
// answers reports whether the service answers now (called each check
// until it does), and window is how long after the first answer a take
// back may still come; then cut cancels the child, with ErrUnreachable.
// After Stop, Watch cuts at once.
func (d *Adrift) Watch(taken func() int32, done <-chan struct{}, answers func() bool, window time.Duration, cut context.CancelCauseFunc) {
	d.unanswered.Store(time.Now().UnixNano())
	d.watch(taken, done, answers, window, cut)
}

// watch is Watch without its record that the service was lost: Keep's
// watch, which only waits for the service, records only what it finds.
func (d *Adrift) watch(taken func() int32, done <-chan struct{}, answers func() bool, window time.Duration, cut context.CancelCauseFunc) {
	n := taken()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		cut(ErrUnreachable)
		return
	}
	if d.stopping == nil {
		d.stopping = make(chan struct{})
	}
	stopping, every := d.stopping, d.tick
	if every <= 0 {
		every = time.Second
	}
	d.wg.Go(func() {
		var deadline time.Time
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-stopping:
				cut(ErrUnreachable)
				return
			case <-tick.C:
			}
			switch {
			case taken() != n:
				return
			case deadline.IsZero() && answers():
				deadline = time.Now().Add(window)
			case deadline.IsZero():
				d.unanswered.Store(time.Now().UnixNano())
			case time.Now().After(deadline):
				cut(ErrUnreachable)
				return
			}
		}
	})
}

// Keep keeps a returned attempt's outcome for a take-back that may still
// come (its completion may not have reached the service) and then calls
// forget: keep after the call, or, when the service was found not
// answering meanwhile or within keep before the call (a watch's), keep
// after the service answers again (answers, checked once a second), since
// a take-back can only come then. After Stop, forget runs at once.
func (d *Adrift) Keep(keep time.Duration, answers func() bool, forget func()) {
	from := time.Now().Add(-keep).UnixNano()
	time.AfterFunc(keep, func() {
		if d.unanswered.Load() < from {
			forget()
			return
		}
		d.watch(func() int32 { return 0 }, nil, answers, keep, func(error) { forget() })
	})
}

// Stop cuts the child of every attempt watched, ending the watches, and
// makes a later Watch cut at once. It is idempotent and does not wait for
// the watches (Wait does).
func (d *Adrift) Stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.stopped {
		d.stopped = true
		if d.stopping != nil {
			close(d.stopping)
		}
	}
}

// Wait waits for the watches to end; after Stop, none starts again.
func (d *Adrift) Wait() { d.wg.Wait() }
