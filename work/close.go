package work

import (
	"context"
)

// signalIdleLocked closes idle once the engine is closed and nothing
// runs.
func (s *Engine) signalIdleLocked() {
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
// Close's wait is bounded by ctx alone, whoever calls: a child that
// ignores its cancellation keeps a Close with a context that never ends
// (context.Background()) waiting until it returns.
//
// A child of the in-process engine cannot close it. Close called with a
// context that carries an Execution of this engine (the child's own
// context, or one derived from it, such as the one a child hands a
// goroutine it starts) fails at once with ErrCloseFromChild and changes
// nothing, where it would otherwise wait for the calling child itself.
// Close goes by the context only (Go gives a goroutine no identity to
// check): called with any other context (the application's,
// context.Background()), Close does not know its caller, and closes and
// cancels as above, the calling child's own Work included. From a goroutine
// a child started, it then returns once that child returns on its
// cancellation. On the child's own goroutine it waits for its caller, which
// cannot return while it waits: it returns ctx's error when ctx ends
// (never, with a context that never ends), the engine closed. A child
// therefore passes its own context (and gets ErrCloseFromChild at once); an
// application that lets a child ask for shutdown has the child signal code
// outside it, which calls Close.
func (s *Engine) Close(ctx context.Context) error {
	if s != nil && s.impl != nil {
		return s.impl.Close(ctx)
	}
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
	now := s.clock.Now()
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
	s.stopWaitTimerLocked()
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
