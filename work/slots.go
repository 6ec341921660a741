package work

import "context"

// Running slots: the pool, lending and reclaiming. The design is described
// in doc.go ("Running slots"); this file keeps its invariants:
//
//   - s.used counts pool slots in use. A pool slot is held by one running
//     Work with lender == nil (for the Work itself, or lent down a chain of
//     borrowers). s.used <= maxRunning, except that a waiter whose context
//     ended may take a slot over the limit (then nothing is dispatched until
//     s.used is below it again).
//   - A Work that lends (lending) or waits to reclaim (reclaim != nil) does
//     not execute; it has at most one borrower, a Work of its own subtree
//     that runs on its slot. A lent slot with no borrower is idle and is
//     kept for the lender and its subtree.
//   - So the Works that execute, those neither lending nor reclaiming,
//     are at most s.used: each slot, pool or lent, has at most one of them
//     at the end of its chain of borrowers.

// queuedBelowLocked adds d to the count of queued Work below every Work
// that encloses os (none for a top-level owner).
func (s *Supervisor) queuedBelowLocked(os *ownerState, d int32) {
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
func (s *Supervisor) dispatchLocked(e *emission) {
	for s.used < s.cfg.maxRunning {
		if len(s.reclaimers) > 0 {
			w := s.reclaimers[0]
			s.reclaimers = s.reclaimers[1:]
			s.grantLocked(w)
			continue
		}
		if s.ready.Len() == 0 {
			return
		}
		it := s.popLocked(s.ready.Front().Value.(*ownerState))
		s.used++
		s.runLocked(it, nil, e)
	}
}

// lendLocked is called as a Result on o is about to wait. When o is a
// child's scope, the Work whose slot that child runs on (the holder) lends
// its slot to its own subtree for the wait; lendLocked returns the holder
// then, nil otherwise. A holder that already lends, or waits to reclaim its
// slot, is returned but changes nothing.
func (s *Supervisor) lendLocked(o Owner, awaited *item, e *emission) *item {
	w := o.sc.holder()
	if w == nil || (w.state != StateRunning && w.state != StateCancelRequested) {
		return nil
	}
	if !w.lending && w.reclaim == nil {
		w.lending, w.awaited = true, awaited
		s.lendOutLocked(w, e)
	}
	return w
}

// lendOutLocked puts w's lent slot to use when it is idle: the awaited
// Work moves onto it when it runs on a pool slot of its own (which goes
// back to the pool), else the first queued Work of w's subtree (in ring
// order) runs on it.
func (s *Supervisor) lendOutLocked(w *item, e *emission) {
	if w.borrower != nil {
		return
	}
	if d := w.awaited; d != nil && d.lender == nil && (d.state == StateRunning || d.state == StateCancelRequested) {
		d.lender, w.borrower = w, d
		s.used--
		s.dispatchLocked(e)
		return
	}
	if w.queuedBelow == 0 {
		return
	}
	for f := s.ready.Front(); f != nil; f = f.Next() {
		if os := f.Value.(*ownerState); os.within(w) {
			s.runLocked(s.popLocked(os), w, e)
			return
		}
	}
}

// unlend ends w's lending as one of its waiters stops waiting, and returns
// once w has a slot again: at once when its lent slot is idle, else when
// its borrower ends or a pool slot is free, whichever comes first. When
// ctx ends first, or the Supervisor is closed, w takes a pool slot
// regardless of the limit.
func (s *Supervisor) unlend(ctx context.Context, w *item) {
	s.mu.Lock()
	if w.lending {
		w.lending, w.awaited = false, nil
		if w.borrower != nil {
			w.reclaim = make(chan struct{})
			s.reclaimers = append(s.reclaimers, w)
			if s.reclaimHook != nil {
				s.reclaimHook()
			}
			if s.closed {
				s.releaseReclaimersLocked()
			} else {
				var e emission
				s.dispatchLocked(&e) // a free pool slot goes to w at once
				s.unlockAndEmit(&e)
				s.mu.Lock()
			}
		}
	}
	ch := w.reclaim
	s.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case <-ch:
	case <-ctx.Done():
		s.mu.Lock()
		if w.reclaim == ch {
			s.removeReclaimerLocked(w)
			s.grantLocked(w)
		}
		s.mu.Unlock()
	}
}

// grantLocked gives reclaiming w a pool slot: w's borrower keeps w's lent
// slot and takes w's place in its chain.
func (s *Supervisor) grantLocked(w *item) {
	s.stepOutLocked(w)
	s.used++
	close(w.reclaim)
	w.reclaim = nil
}

// stepOutLocked takes w, whose lent slot its borrower b uses, out of its
// chain: b now runs on whatever w ran on.
func (s *Supervisor) stepOutLocked(w *item) {
	b := w.borrower
	b.lender = w.lender
	if w.lender != nil {
		w.lender.borrower = b
	}
	w.lender, w.borrower = nil, nil
}

// freeSlotLocked gives up the slot of it, which has just settled: its
// borrower takes its place, or the slot goes back to its lender, or to the
// pool. The caller dispatches afterwards.
func (s *Supervisor) freeSlotLocked(it *item, e *emission) {
	it.lending, it.awaited = false, nil
	if it.reclaim != nil {
		// A waiter of a Work that has ended (a goroutine the child
		// leaked) waits no longer.
		s.removeReclaimerLocked(it)
		close(it.reclaim)
		it.reclaim = nil
	}
	switch {
	case it.borrower != nil:
		s.stepOutLocked(it)
	case it.lender != nil:
		l := it.lender
		l.borrower, it.lender = nil, nil
		s.returnLocked(l, e)
	default:
		s.used--
	}
}

// returnLocked is called when l's lent slot comes back from its borrower.
func (s *Supervisor) returnLocked(l *item, e *emission) {
	switch {
	case l.reclaim != nil:
		s.removeReclaimerLocked(l)
		close(l.reclaim)
		l.reclaim = nil
	case l.lending:
		s.lendOutLocked(l, e)
	}
}

func (s *Supervisor) removeReclaimerLocked(w *item) {
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
func (s *Supervisor) releaseReclaimersLocked() {
	for _, w := range s.reclaimers {
		s.grantLocked(w)
	}
	s.reclaimers = nil
}

// offerLocked runs newly queued Work of os on an idle lent slot of the
// nearest enclosing Work that lends one, if any.
func (s *Supervisor) offerLocked(os *ownerState, e *emission) {
	for sc := os.sc; sc != nil; sc = sc.parent {
		if w := sc.work; w != nil && w.lending && w.borrower == nil {
			s.lendOutLocked(w, e)
			return
		}
	}
}
