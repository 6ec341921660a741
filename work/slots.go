package work

// Running slots: the pool, lending and reclaiming. The design is described
// in doc.go ("Running slots"); this file keeps its invariants:
//
//   - s.used counts pool slots in use. A pool slot is held by one running
//     Work with lender == nil (for the Work itself, or lent down a chain of
//     borrowers). s.used <= maxRunning, except that a Work owed its slot
//     back may take one over the limit when it has no model-request
//     boundary to wait at, or when its context ended there (then nothing
//     is dispatched until s.used is below the limit again).
//   - A Work lends (lending) while it has waiters (one awaited entry
//     each); once the last one stops while a borrower still runs on its
//     slot it is owed a slot (reclaim != nil, in s.reclaimers). Either
//     way it has at most one borrower, a Work of its own subtree that runs
//     on its slot; a lent slot with no borrower is idle and is kept for
//     the lender and its subtree.
//   - Each slot, pool or lent, has at most one Work that holds it to
//     execute: the end of its chain of borrowers. A Work that lends or is
//     owed a slot holds none; a lending one executes only on other
//     goroutines than its waiters', and one owed a slot only until its
//     next model-request boundary (Engine.awaitSlot).

import (
	"context"
	"slices"
)

// queuedBelowLocked adds d to the count of queued Work below every Work
// that encloses os (none for a top-level owner).
func (s *Engine) queuedBelowLocked(os *ownerState, d int32) {
	for sc := os.sc; sc != nil; sc = sc.parent {
		if sc.work != nil {
			sc.work.queuedBelow += d
		}
	}
}

// within reports whether os is w's scope or lies below it.
func (os *ownerState) within(w *item) bool {
	for sc := os.sc; sc != nil; sc = sc.parent {
		if sc.work == w {
			return true
		}
	}
	return false
}

// dispatchLocked hands out free pool slots: first to Works whose waiter
// waits to reclaim a slot (they already run), then to queued Work, one
// Work per owner in turn (FIFO within an owner, round-robin across owners).
func (s *Engine) dispatchLocked(e *emission) {
	for s.used < s.lim.MaxRunning {
		if len(s.reclaimers) > 0 {
			w := s.reclaimers[0]
			s.reclaimers = s.reclaimers[1:]
			s.grantLocked(w)
			continue
		}
		if s.ready.len() == 0 {
			return
		}
		it := s.popLocked(s.ready.front())
		s.used++
		s.runLocked(it, nil, e)
	}
}

// lendLocked is called as a Result on o is about to wait for awaited. When
// o is a child's scope, the Work whose slot that child runs on (the holder)
// lends its slot to its own subtree while any of its waiters waits: the
// waiter is counted (one entry in holder.awaited) and lendLocked returns
// the holder, for unlend; it returns nil otherwise. A holder that is owed
// its slot back (reclaiming) lends again: its borrower keeps the slot.
func (s *Engine) lendLocked(o Owner, awaited *item, e *emission) *item {
	w := scopeOf(o).holder()
	if w == nil || (w.state() != StateRunning && w.state() != StateCancelRequested) {
		return nil
	}
	l := w.lendSt()
	l.awaited = append(l.awaited, awaited)
	w.lending = true
	if l.reclaim != nil {
		s.removeReclaimerLocked(w)
		s.endReclaimLocked(w)
	}
	s.lendOutLocked(w, e)
	return w
}

// lendOutLocked puts w's lent slot to use when it is idle: a Work one of
// w's waiters waits for moves onto it when it runs on a pool slot of its
// own (which goes back to the pool), else the first queued Work of w's
// subtree (in ring order) runs on it.
func (s *Engine) lendOutLocked(w *item, e *emission) {
	if w.borrower() != nil {
		return
	}
	for _, d := range w.lendSt().awaited {
		if d.lender() == nil && (d.state() == StateRunning || d.state() == StateCancelRequested) {
			d.lendSt().lender, w.lend.borrower = w, d
			s.used--
			s.dispatchLocked(e)
			return
		}
	}
	if w.queuedBelow == 0 {
		return
	}
	for os := s.ready.front(); os != nil; os = os.rnext {
		if os.within(w) {
			s.runLocked(s.popLocked(os), w, e)
			return
		}
	}
}

// unlend is called as a waiter of w, waiting for awaited, stops waiting
// (timeout, settlement or ctx end). It never blocks. While other waiters
// of w wait, w keeps lending. When the last one stops and a borrower
// still runs on w's lent slot, w is owed a slot: it takes a free pool
// slot at once (reclaimers come before queued Work); else, when code on
// w's slot uses the model-request boundary (an agent child), w waits to
// reclaim one and its next boundary.BeginRequest blocks until it has
// (see awaitSlot); else (a function child) w takes a pool slot over the
// limit, and nothing is dispatched until the pool is below it again.
func (s *Engine) unlend(w *item, awaited *item) {
	s.mu.Lock()
	l := w.lendSt()
	if i := slices.Index(l.awaited, awaited); i >= 0 {
		l.awaited = slices.Delete(l.awaited, i, i+1)
	}
	if !w.lending || len(l.awaited) > 0 {
		s.mu.Unlock()
		return
	}
	w.lending, l.awaited = false, nil
	if l.borrower == nil {
		s.mu.Unlock()
		return
	}
	l.reclaim = make(chan struct{})
	w.reclaiming.Store(true)
	s.reclaimers = append(s.reclaimers, w)
	if s.reclaimHook != nil {
		s.reclaimHook()
	}
	var e emission
	if s.closed {
		s.releaseReclaimersLocked()
	} else {
		s.dispatchLocked(&e) // a free pool slot goes to w at once
	}
	if l.reclaim != nil && !w.boundary.Load() {
		s.removeReclaimerLocked(w)
		s.grantLocked(w)
	}
	s.unlockAndEmit(&e)
}

// awaitSlot is the model-request boundary's wait of the child whose own
// scope is sc and whose context is cctx: it returns once the Work whose
// slot the child runs on is not owed its slot back, or, when cctx ends
// first, gives that Work a pool slot regardless of the limit. It marks
// the Work as one whose code uses the boundary. It takes no lock unless
// the Work is owed its slot.
func (s *Engine) awaitSlot(sc *scope, cctx context.Context) {
	w := sc.holder()
	if w == nil {
		return
	}
	if !w.boundary.Load() {
		w.boundary.Store(true)
	}
	if !w.reclaiming.Load() {
		return
	}
	s.mu.Lock()
	if w.reclaim() != nil && s.boundHook != nil {
		s.boundHook()
	}
	for w.reclaim() != nil {
		ch := w.reclaim()
		s.mu.Unlock()
		select {
		case <-ch:
			s.mu.Lock()
		case <-cctx.Done():
			s.mu.Lock()
			if w.reclaim() == ch {
				s.removeReclaimerLocked(w)
				s.grantLocked(w)
			}
		}
	}
	s.mu.Unlock()
}

// awaitSlot is the running-slot wait of the Work's child's boundary.
func (it *item) awaitSlot() { it.s.awaitSlot(it.sc, &it.xctx) }

// grantLocked gives reclaiming w a pool slot: w's borrower keeps w's lent
// slot and takes w's place in its chain.
func (s *Engine) grantLocked(w *item) {
	s.stepOutLocked(w)
	s.used++
	s.endReclaimLocked(w)
}

// endReclaimLocked ends w's wait to reclaim a slot (the caller has taken
// w out of s.reclaimers).
func (s *Engine) endReclaimLocked(w *item) {
	close(w.lend.reclaim)
	w.lend.reclaim = nil
	w.reclaiming.Store(false)
}

// stepOutLocked takes w, whose lent slot its borrower b uses, out of its
// chain: b now runs on whatever w ran on.
func (s *Engine) stepOutLocked(w *item) {
	b, l := w.lend.borrower, w.lend.lender
	b.lend.lender = l
	if l != nil {
		l.lend.borrower = b
	}
	w.lend.lender, w.lend.borrower = nil, nil
}

// freeSlotLocked gives up the slot of it, which has just settled: its
// borrower takes its place, or the slot goes back to its lender, or to the
// pool. The caller dispatches afterwards.
func (s *Engine) freeSlotLocked(it *item, e *emission) {
	it.lending = false
	if it.lend == nil {
		s.used-- // it never lent nor borrowed: a pool slot
		return
	}
	it.lend.awaited = nil
	if it.lend.reclaim != nil {
		// A boundary of a Work that has ended (a goroutine the child
		// leaked) waits no longer.
		s.removeReclaimerLocked(it)
		s.endReclaimLocked(it)
	}
	switch {
	case it.lend.borrower != nil:
		s.stepOutLocked(it)
	case it.lend.lender != nil:
		l := it.lend.lender
		l.lend.borrower, it.lend.lender = nil, nil
		s.returnLocked(l, e)
	default:
		s.used--
	}
}

// returnLocked is called when l's lent slot comes back from its borrower.
func (s *Engine) returnLocked(l *item, e *emission) {
	switch {
	case l.reclaim() != nil:
		s.removeReclaimerLocked(l)
		s.endReclaimLocked(l)
	case l.lending:
		s.lendOutLocked(l, e)
	}
}

func (s *Engine) removeReclaimerLocked(w *item) {
	for i, x := range s.reclaimers {
		if x == w {
			s.reclaimers = append(s.reclaimers[:i], s.reclaimers[i+1:]...)
			return
		}
	}
}

// releaseReclaimersLocked lets every waiting reclaimer go at once, each on
// a pool slot: after Close nothing new is dispatched, so the limit no
// longer needs them to wait.
func (s *Engine) releaseReclaimersLocked() {
	rs := s.reclaimers
	s.reclaimers = nil
	for _, w := range rs {
		s.grantLocked(w)
	}
}

// offerLocked runs newly queued Work of os on an idle lent slot of the
// nearest enclosing Work that lends one, if any.
func (s *Engine) offerLocked(os *ownerState, e *emission) {
	for sc := os.sc; sc != nil; sc = sc.parent {
		if w := sc.work; w != nil && w.lending && w.borrower() == nil {
			s.lendOutLocked(w, e)
			return
		}
	}
}
