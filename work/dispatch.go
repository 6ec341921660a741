package work

import (
	"context"
)

// popLocked takes the first queued Work of os (which is in the ready ring)
// and moves os to the back of the ring when it has more.
func (s *Engine) popLocked(os *ownerState) *item {
	it := os.queue.front()
	os.queue.remove(it)
	s.queuedBelowLocked(os, -1)
	s.ready.remove(os)
	if os.queue.len() > 0 {
		s.ready.pushBack(os)
	}
	return it
}

// runLocked starts a Work taken from its owner's queue, on a pool slot
// (lender nil) or on lender's lent slot, on a goroutine of its own.
//
// The child may run before e, which holds the Work's running event, is
// delivered: the Work's emit lock is taken first, for e (unlockAndEmit
// finds it held), so that the child's first progress events, which take
// no s.mu, wait behind its queued and running events.
func (s *Engine) runLocked(it *item, lender *item, e *emission) {
	jctx := s.prepareRunLocked(it, lender, e)
	s.live.Add(1)
	it.emitMu.Lock()
	it.emitHeld = true
	if jctx != nil {
		go s.execute(it, jctx)
		return
	}
	go it.execute() // a 16-byte closure: the item alone
}

// execute runs it's child on the calling goroutine, a new one (runLocked).
func (it *item) execute() { it.s.execute(it, nil) }

// prepareRunLocked moves a Work taken from its owner's queue to running.
// Its child runs with its item's context (it.xctx) and it.run, which the
// goroutine executing it takes (nothing else reads it.run once the Work
// runs); an external job's Submit runs with the context prepareRunLocked
// returns (nil for other Work).
func (s *Engine) prepareRunLocked(it *item, lender *item, e *emission) (jctx context.Context) {
	now := s.nowLocked(e)
	it.started = now
	s.transition(it, StateRunning, e, now).QueueWait = now.Sub(it.enqueued())
	s.running.pushBack(it)
	if lender != nil {
		it.lendSt().lender, lender.lendSt().borrower = lender, it
	}
	it.scope = scope{work: it, parent: it.owner.sc, acct: &it.brun.account}
	it.sc = &it.scope
	it.exec = Execution{rt: it}
	it.xctx.it = it
	if it.job != nil {
		// An external job's Submit runs with a context of its own, which
		// it.cancel cancels (job.go); its item's context is not used.
		var cancel context.CancelCauseFunc
		jctx, cancel = context.WithCancelCause(it.ctx)
		it.cancel = cancel
	}
	if it.maxDur() > 0 {
		if _, system := s.clock.(systemClock); system {
			s.addDeadlineLocked(it, now)
		} else {
			f := func() { it.xctx.cancel(errDeadline) }
			if it.job != nil {
				f = func() { s.expireJob(it) }
			}
			it.stopTimer = s.clock.AfterFunc(it.maxDur(), f)
		}
	}
	return jctx
}
