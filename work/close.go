package work

import (
	"context"
)

// signalIdleLocked closes idle once the Supervisor is closed and nothing
// runs.
func (s *Supervisor) signalIdleLocked() {
	if s.closed && !s.idleDone && s.live.Load() == 0 {
		s.idleDone = true
		close(s.idle)
	}
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
// profiler label "agentwork.supervisor" (runtime/pprof), which every
// goroutine running a child carries with a value unique to its Supervisor
// within the process (a decimal number), and which goroutines a child
// starts inherit, so CPU and goroutine profiles can also be split by
// Supervisor. The label is read from one goroutine profile, only while
// children run.
// A child that replaces its goroutine's profiler labels (pprof.Do or
// pprof.SetGoroutineLabels with a context that lacks the label) and then
// closes with a context not derived from its own is not recognised.
func (s *Supervisor) Close(ctx context.Context) error {
	if s.uninitialized() {
		return ErrNotInitialized
	}
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
	for _, it := range s.held {
		s.cancelLocked(it, now, errClosed, &e)
	}
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
