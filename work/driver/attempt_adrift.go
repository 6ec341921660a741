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
// outcome for a take-back a while, counted from when the service answers
// again if it was lost meanwhile. The zero value is ready; an Adrift is
// safe for concurrent use.
type Adrift struct {
	mu       sync.Mutex // guards stopped, stopping and keeps, orders wg's Go before its Wait
	stopped  bool
	stopping chan struct{}
	keeps    map[*time.Timer]func() // Keep's pending timers and their forgets
	wg       sync.WaitGroup
	tick     time.Duration // between two checks of a watch; 0: a second
	// lost is when the service was last lost (a Watch began: an attempt
	// went adrift) or found not answering (a watch's check), as the time
	// since adriftEpoch plus one (monotonic; 0: never). Keep reads it.
	lost atomic.Int64
}

// adriftEpoch is the origin of Adrift.lost's monotonic times.
var adriftEpoch = time.Now()

// sinceEpoch returns t as Adrift.lost stores it.
func sinceEpoch(t time.Time) int64 { return int64(t.Sub(adriftEpoch)) + 1 }

// Watch watches one attempt adrift on a goroutine of its own, checking
// once a second: taken counts the times the Work took the attempt back
// (a change from its value now ends the watch: the attempt is attached
// again), done is closed when its child returned (the watch ends),
// answers reports whether the service answers now (called each check
// until it does), and window is how long after the first answer a take
// back may still come; then cut cancels the child, with ErrUnreachable.
// After Stop, Watch cuts at once.
func (d *Adrift) Watch(taken func() int32, done <-chan struct{}, answers func() bool, window time.Duration, cut context.CancelCauseFunc) {
	d.lost.Store(sinceEpoch(time.Now()))
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
				d.lost.Store(sinceEpoch(time.Now()))
			case time.Now().After(deadline):
				cut(ErrUnreachable)
				return
			}
		}
	})
}

// Keep keeps a returned attempt's outcome for a take-back that may still
// come (its completion may not have reached the service) and then calls
// forget: keep after the call, or, when the service was lost (a Watch
// began) or found not answering within keep before the call or since,
// keep after the service answers again (answers, checked once a second
// on a goroutine of its own), since a take-back can only come then. Stop
// runs the forget of every pending Keep at once, and a Keep after Stop
// forgets at once.
func (d *Adrift) Keep(keep time.Duration, answers func() bool, forget func()) {
	from := sinceEpoch(time.Now().Add(-keep))
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		forget()
		return
	}
	if d.keeps == nil {
		d.keeps = map[*time.Timer]func(){}
	}
	var t *time.Timer
	t = time.AfterFunc(keep, func() {
		d.mu.Lock()
		_, pending := d.keeps[t]
		delete(d.keeps, t)
		d.mu.Unlock()
		switch {
		case !pending: // Stop forgot it
		case d.lost.Load() < from:
			forget()
		default:
			d.watch(func() int32 { return 0 }, nil, answers, keep, func(error) { forget() })
		}
	})
	d.keeps[t] = forget
}

// Stop cuts the child of every attempt watched, ending the watches, runs
// the forget of every pending Keep, and makes a later Watch cut (and a
// later Keep forget) at once. It is idempotent and does not wait for
// the watches (Wait does).
func (d *Adrift) Stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.stopped {
		d.stopped = true
		if d.stopping != nil {
			close(d.stopping)
		}
		for t, forget := range d.keeps {
			t.Stop()
			forget()
		}
		d.keeps = nil
	}
}

// Wait waits for the watches to end; after Stop, none starts again.
func (d *Adrift) Wait() { d.wg.Wait() }
