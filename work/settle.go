package work

import (
	"context"
	"errors"
	"time"
)

// settle records how a running Work ended and frees its slot.
//
// With next, settle may hand the freed pool slot to the first Work of the
// fair order (when no reclaimer waits for one) and return it, running, for
// the calling goroutine to execute.
//
// The next Work's context is as prepareRunLocked returns it.
func (s *Engine) settle(it *item, out string, err error, panicked, next bool) (nit *item, njctx context.Context) {
	// The emission comes from a pool: on the stack of a child goroutine
	// (which starts small) it would make the stack grow for every Work.
	e := s.getEmission()
	s.mu.Lock()
	now := s.nowLocked(e)
	cause, ctxErr := it.xctx.cause()
	to, class, bytes := StateCompleted, "", 0
	switch {
	case panicked:
		to, class = StateFailed, ClassPanic
	case errors.Is(cause, errDeadline):
		to, class = StateFailed, ClassDeadline
	case err != nil && it.state() == StateCancelRequested && ctxErr != nil && errors.Is(err, context.Canceled):
		to, class = StateCancelled, ClassCancelled
	case err != nil && it.brun.refused():
		to, class = StateFailed, ClassBudgetExhausted
	case err != nil:
		to, class = StateFailed, ClassError
	case it.maxBytes > 0 && len(out) > it.maxBytes:
		to, class, bytes = StateFailed, ClassResultTooLarge, len(out)
	default:
		bytes = len(out)
		it.output, it.hasOutput = out, true
	}
	s.running.remove(it)
	if it.stopTimer != nil {
		it.stopTimer()
		it.stopTimer = nil
	}
	s.removeDeadlineLocked(it)
	it.xctx.cancel(nil)
	s.endRunLocked(it, class, e)
	it.class = classOf(class) // the terminal event's ErrorClass (transition) and Status.Class
	if ev := s.transition(it, to, e, now); ev != nil {
		ev.Duration, ev.Bytes = now.Sub(it.started), bytes
	}
	if s.retireLocked(it, now, e) {
		s.evictLocked(it.owner)
	}
	s.endScopeLocked(it.sc, it.scopeID, e)
	s.freeSlotLocked(it, e)
	if next && !s.closed && s.used < s.lim.MaxRunning && len(s.reclaimers) == 0 && s.ready.len() > 0 {
		nit = s.popLocked(s.ready.front())
		s.used++
		njctx = s.prepareRunLocked(nit, nil, e)
	}
	s.dispatchLocked(e)
	s.unlockAndEmit(e)
	putEmission(e)
	return nit, njctx
}

// finishLocked does the bookkeeping common to every terminal transition.
func (s *Engine) finishLocked(it *item, now time.Time, e *emission) {
	if s.retireLocked(it, now, e) {
		s.evictLocked(it.owner)
	}
}

// retireLocked is finishLocked without the eviction, which it reports is
// due (settle evicts from its own frame: nested here, the eviction's map
// delete made a new child goroutine's stack grow).
func (s *Engine) retireLocked(it *item, now time.Time, e *emission) (evict bool) {
	it.finished = now
	s.settleRunLocked(&it.brun)
	it.owner.active--
	s.wakeWaitersLocked(it, e)
	if it.detached {
		delete(it.owner.hidden, it)
		s.forgetItemLocked(it)
		return false
	}
	it.owner.pushTerminal(it)
	return true
}

// forgetItemLocked removes a terminal Work from the census; nothing refers
// to it afterwards.
func (s *Engine) forgetItemLocked(it *item) {
	it.counts[it.st]--
	it.output, it.mb = "", nil
}
