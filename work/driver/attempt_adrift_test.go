package driver

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// adriftCase is one watched attempt: its take-backs, its child's end,
// the service's answers and its cuts. Each check of the service waits
// for the test's answer (answer) until quiet is closed; it then answers
// answer's value at once (calls counts every check).
type adriftCase struct {
	taken  atomic.Int32
	done   chan struct{}
	asked  chan struct{}
	reply  chan bool
	quiet  chan struct{}
	answer atomic.Bool
	calls  atomic.Int32
	cuts   atomic.Int32
}

func newAdriftCase() *adriftCase {
	return &adriftCase{done: make(chan struct{}), asked: make(chan struct{}), reply: make(chan bool), quiet: make(chan struct{})}
}

// answers is the case's service check: it counts the check and waits for
// the test's answer (respond), or answers answer once quiet is closed.
func (c *adriftCase) answers() bool {
	c.calls.Add(1)
	select {
	case c.asked <- struct{}{}:
		return <-c.reply
	case <-c.quiet:
		return c.answer.Load()
	}
}

func (c *adriftCase) watch(d *Adrift, window time.Duration) {
	d.Watch(c.taken.Load, c.done, c.answers, window, func(cause error) {
		if !errors.Is(cause, ErrUnreachable) {
			panic(fmt.Sprintf("cut with %v, want ErrUnreachable", cause))
		}
		c.cuts.Add(1)
	})
}

// respond waits for the watch's next check of the service and answers v.
func (c *adriftCase) respond(t *testing.T, v bool) {
	t.Helper()
	select {
	case <-c.asked:
		c.reply <- v
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not check the service")
	}
}

// TestAdriftTakenBack: a take-back ends the watch, the child uncut,
// however long the service has answered.
func TestAdriftTakenBack(t *testing.T) {
	d := &Adrift{tick: time.Millisecond}
	c := newAdriftCase()
	c.taken.Store(2) // taken back twice before: the watch counts from here
	c.watch(d, time.Hour)
	c.respond(t, false)
	c.respond(t, true)
	c.taken.Add(1)
	d.Wait()
	if n := c.cuts.Load(); n != 0 {
		t.Fatalf("a child taken back was cut %d times", n)
	}
	if n := c.calls.Load(); n != 2 {
		t.Fatalf("the service was checked %d times, want 2 (none once it answered)", n)
	}
}

// TestAdriftDone: a child that returned ends the watch uncut.
func TestAdriftDone(t *testing.T) {
	d := &Adrift{tick: time.Millisecond}
	c := newAdriftCase()
	c.watch(d, 0)
	c.respond(t, false)
	close(c.quiet)
	close(c.done)
	d.Wait()
	if n := c.cuts.Load(); n != 0 {
		t.Fatalf("a child that returned was cut %d times", n)
	}
}

// TestAdriftWindow: no cut while the service does not answer; once it
// answers, it is checked no more, and the window's end cuts the child
// once.
func TestAdriftWindow(t *testing.T) {
	d := &Adrift{tick: time.Millisecond}
	c := newAdriftCase()
	c.watch(d, 20*time.Millisecond)
	for range 3 {
		c.respond(t, false)
	}
	if n := c.cuts.Load(); n != 0 {
		t.Fatalf("cut %d times before the service answered", n)
	}
	start := time.Now()
	c.respond(t, true)
	d.Wait()
	if n := c.cuts.Load(); n != 1 {
		t.Fatalf("cut %d times, want 1", n)
	}
	if waited := time.Since(start); waited < 20*time.Millisecond {
		t.Fatalf("cut %v after the service answered, before the window's end", waited)
	}
	if n := c.calls.Load(); n != 4 {
		t.Fatalf("the service was checked %d times, want 4 (none once it answered)", n)
	}
}

// TestAdriftStop: Stop cuts every watched child and Wait waits for the
// watches; a Watch after Stop cuts at once, starting nothing.
func TestAdriftStop(t *testing.T) {
	d := &Adrift{} // a second between checks: only Stop ends these watches
	a, b := newAdriftCase(), newAdriftCase()
	close(a.quiet)
	close(b.quiet)
	a.watch(d, time.Hour)
	b.watch(d, time.Hour)
	d.Stop()
	d.Stop() // idempotent
	d.Wait()
	if a.cuts.Load() != 1 || b.cuts.Load() != 1 {
		t.Fatalf("cuts after Stop: %d and %d, want 1 each", a.cuts.Load(), b.cuts.Load())
	}
	c := newAdriftCase()
	c.watch(d, time.Hour)
	if n := c.cuts.Load(); n != 1 {
		t.Fatalf("a Watch after Stop cut %d times, want 1 at once", n)
	}
	d.Wait()
	var zero Adrift
	zero.Stop() // a zero Adrift that watched nothing stops too
	zero.Wait()
}

// keepCase is one returned attempt's outcome under Keep: the service's
// answers as an adriftCase gives them, and when forget ran.
type keepCase struct {
	*adriftCase
	forgot chan struct{}
}

func (c *adriftCase) keep(d *Adrift, keep time.Duration) keepCase {
	k := keepCase{adriftCase: c, forgot: make(chan struct{})}
	d.Keep(keep, c.answers, func() { close(k.forgot) })
	return k
}

func (k keepCase) forgotten(t *testing.T) {
	t.Helper()
	select {
	case <-k.forgot:
	case <-time.After(10 * time.Second):
		t.Fatal("the outcome was kept for good")
	}
}

// TestKeepServiceUp: with the service never found unanswering, the
// outcome is forgotten keep after the return, the service not checked.
func TestKeepServiceUp(t *testing.T) {
	d := &Adrift{tick: time.Millisecond}
	defer d.Wait()
	defer d.Stop()
	c := newAdriftCase()
	defer close(c.quiet) // before Stop and Wait: no check left waiting, should the test fail
	start := time.Now()
	c.keep(d, 20*time.Millisecond).forgotten(t)
	if waited := time.Since(start); waited < 20*time.Millisecond {
		t.Fatalf("forgotten after %v, before keep", waited)
	}
	if n := c.calls.Load(); n != 0 {
		t.Fatalf("the service was checked %d times", n)
	}
}

// TestKeepUntilServiceAnswers: an outcome returned while another attempt
// is adrift (its watch finds the service not answering) is kept past keep
// while the service does not answer, and forgotten keep after it does
// (the chaos run's server restart: the Rejoin came after a fixed keep
// from the return had dropped the outcome). A loss found long before the
// return (more than keep) keeps nothing longer.
func TestKeepUntilServiceAnswers(t *testing.T) {
	d := &Adrift{tick: time.Millisecond}
	defer d.Wait()
	defer d.Stop()
	adrift, c := newAdriftCase(), newAdriftCase()
	defer close(c.quiet)      // before Stop and Wait: no check left waiting
	defer close(adrift.quiet) // for the test's answer, should it fail
	adrift.watch(d, time.Hour)
	adrift.respond(t, false) // the service is away
	k := c.keep(d, 10*time.Millisecond)
	for range 3 { // past keep: the outcome's watch checks the service
		c.respond(t, false)
	}
	select {
	case <-k.forgot:
		t.Fatal("the outcome was forgotten while the service did not answer")
	default:
	}
	start := time.Now()
	c.respond(t, true)
	k.forgotten(t)
	if waited := time.Since(start); waited < 10*time.Millisecond {
		t.Fatalf("forgotten %v after the service answered, before keep", waited)
	}
	close(adrift.done)

	old := &Adrift{tick: time.Millisecond}
	defer old.Wait()
	defer old.Stop()
	old.lost.Store(sinceEpoch(time.Now().Add(-time.Hour)))
	later := newAdriftCase()
	defer close(later.quiet)
	later.keep(old, 10*time.Millisecond).forgotten(t)
	if n := later.calls.Load(); n != 0 {
		t.Fatalf("an hour-old loss: the service was checked %d times", n)
	}
}

// TestKeepStop: Stop forgets every pending Keep at once, and a Keep after
// Stop forgets at once: no timer outlives the Worker's stop.
func TestKeepStop(t *testing.T) {
	d := &Adrift{tick: time.Millisecond}
	c := newAdriftCase()
	defer close(c.quiet)
	k := c.keep(d, time.Hour)
	d.Stop()
	k.forgotten(t)
	after := newAdriftCase()
	defer close(after.quiet)
	select {
	case <-after.keep(d, time.Hour).forgot:
	default:
		t.Fatal("a Keep after Stop did not forget at once")
	}
	d.Wait()
	if n := c.calls.Load() + after.calls.Load(); n != 0 {
		t.Fatalf("the service was checked %d times", n)
	}
}
