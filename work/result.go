package work

import (
	"context"
	"time"

	"github.com/agentwork/agentwork/work/observe"
)

// Result returns the exact output of a completed Work. For failed or
// cancelled Work it returns the Status at once (failure is visible only as
// state). Otherwise it waits until the Work settles, timeout passes (capped
// at 30 s; 0 does not wait) or ctx is done, and returns the Status then, with
// the output if it completed meanwhile. The output is meaningful only when
// the returned Status is completed (an empty output is a valid result). The
// wait is woken by settlement, not by polling. A negative timeout is
// ErrInvalidTimeout.
//
// When o is a child's scope, the waiting child lends its running slot to
// its own descendants for the wait; Result still returns at its timeout or
// ctx end, and a child left without a slot reclaims one as described in
// "Running slots" in docs/engine.md. Once Result has returned a terminal
// answer, the Work keeps no command records (see Send).
func (s *Engine) Result(ctx context.Context, o Owner, id string, timeout time.Duration) (Status, string, error) {
	if s != nil && s.impl != nil {
		return s.impl.Result(ctx, o, id, timeout)
	}
	if s.uninitialized() {
		return Status{}, "", ErrNotInitialized
	}
	if timeout < 0 {
		return Status{}, "", ErrInvalidTimeout
	}
	timeout = min(timeout, MaxResultWait)
	s.mu.Lock()
	it, err := s.lookupLocked(o, id)
	if err != nil || (timeout == 0 && !it.terminal()) {
		return s.readLocked(it, err)
	}
	if it.terminal() {
		return s.readSettledLocked(o, id, it)
	}
	wt := s.newWaiterLocked(it, timeout)
	w := s.lendAndUnlock(o, it)

	settled := s.await(ctx, wt)
	if w != nil {
		s.unlend(w, it)
	}
	s.mu.Lock()
	s.putWaiterLocked(wt)
	if settled {
		// The token comes after the terminal events are delivered.
		return s.readLocked(s.relookupLocked(o, it))
	}
	if it, err := s.relookupLocked(o, it); err == nil && it.terminal() {
		// The wait ended (timeout, ctx) while the Work settled and before
		// its token came.
		return s.readSettledLocked(o, id, it)
	}
	return s.readLocked(s.relookupLocked(o, it))
}

// readSettledLocked answers Result for terminal it and releases s.mu.
// The Work is settled, perhaps with its events still being delivered:
// their emission holds the Work's emit lock from before s.mu was released
// until they are, so a terminal answer is never ahead of the observer.
//
// Emissions take a Work's emit lock before they release s.mu: when it is
// free while s.mu is held, no emission of the Work is under way and the
// answer is read at once.
func (s *Engine) readSettledLocked(o Owner, id string, it *item) (Status, string, error) {
	if it.emitMu.TryLock() {
		it.emitMu.Unlock()
		return s.readLocked(it, nil)
	}
	s.mu.Unlock()
	it.emitMu.Lock() // a barrier: waits until the emitter holding it is done
	//lint:ignore SA2001 the empty section is the barrier above
	it.emitMu.Unlock()
	s.mu.Lock()
	return s.readLocked(s.lookupLocked(o, id))
}

// readLocked answers Result and releases s.mu.
func (s *Engine) readLocked(it *item, err error) (Status, string, error) {
	if err != nil {
		s.mu.Unlock()
		return Status{}, "", err
	}
	st := it.status()
	if st.State.Terminal() {
		it.dropCommands()
	}
	if !it.hasOutput {
		s.mu.Unlock()
		return st, "", nil
	}
	out := it.output
	if it.read {
		s.mu.Unlock()
		return st, out, nil
	}
	it.markRead()
	if s.nop { // the event is only the Observer's: no clock read for the no-op one
		s.mu.Unlock()
		return st, out, nil
	}
	s.emitResultRead(it, len(out))
	return st, out, nil
}

// emitResultRead releases s.mu and delivers it's result-read event.
//
//go:noinline
func (s *Engine) emitResultRead(it *item, bytes int) {
	var e emission
	e.add(it, observe.Event{Type: observe.EventResultRead, Time: s.clock.Now(), Bytes: bytes})
	s.unlockAndEmit(&e)
}

// lendAndUnlock is lendLocked for a Result on o about to wait for it, then
// releases s.mu (delivering what lending emitted). Only a child's scope
// can lend.
func (s *Engine) lendAndUnlock(o Owner, it *item) *item {
	if o.sc == nil {
		s.mu.Unlock()
		return nil
	}
	return s.lendAndEmit(o, it)
}

//go:noinline
func (s *Engine) lendAndEmit(o Owner, it *item) *item {
	var e emission
	w := s.lendLocked(o, it, &e)
	s.unlockAndEmit(&e)
	return w
}
