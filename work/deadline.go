package work

import "time"

// On the system clock, the deadlines of running Works share one timer: the
// Works with a deadline are kept in a min-heap by deadline (s.dls, guarded
// by s.mu), and s.dlTimer is armed for the earliest. Starting a Work adds
// it to the heap (re-arming the timer only when its deadline is the new
// earliest); settling removes it and never re-arms or stops it: a timer
// that fires for a Work already settled finds nothing due and re-arms for
// the next, if any.
// So a Work's deadline allocates nothing and touches no runtime timer in
// the common case. Other clocks keep a timer per Work (their tests count
// timers).

// addDeadlineLocked adds running it, whose deadline is it.deadline(), to
// the heap.
func (s *Engine) addDeadlineLocked(it *item, now time.Time) {
	heapPush(&s.dls, it)
	if s.dlAt.IsZero() || it.deadline().Before(s.dlAt) {
		s.armDeadlineLocked(it.deadline(), now)
	}
}

func (s *Engine) armDeadlineLocked(at, now time.Time) {
	s.dlAt = at
	if s.dlTimer == nil {
		s.dlTimer = time.AfterFunc(at.Sub(now), s.expireDue)
		return
	}
	s.dlTimer.Reset(at.Sub(now))
}

// removeDeadlineLocked takes it out of the heap, if it is there.
func (s *Engine) removeDeadlineLocked(it *item) {
	i := int(it.dlIdx) - 1
	if i < 0 {
		return
	}
	heapRemove(&s.dls, i)
	// The timer stays armed when the heap empties: one Work after another
	// then touches it only when a deadline is earlier than the one it is
	// armed for, and an idle engine wakes once for nothing. A closed
	// one lets its timer go.
	s.stopDeadlineTimerLocked()
}

// stopDeadlineTimerLocked stops the deadline timer of a closed engine
// whose heap is empty, so that no timer holds the engine after Close.
// Close calls it too: a timer armed for a Work that ended before Close
// would otherwise stay armed for up to the maximum duration.
func (s *Engine) stopDeadlineTimerLocked() {
	if len(s.dls) == 0 && s.closed && !s.dlAt.IsZero() {
		s.dlTimer.Stop()
		s.dlAt = time.Time{}
	}
}

// expireDue runs when the deadline timer fires: it cancels every running
// Work whose deadline has passed (the same cancellation as a per-Work
// timer's, under the lock as cancelLocked does) and re-arms for the next.
func (s *Engine) expireDue() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dlAt = time.Time{}
	now := time.Now()
	for len(s.dls) > 0 && !s.dls[0].deadline().After(now) {
		it := s.dls[0]
		s.removeDeadlineLocked(it)
		it.cancelRun(errDeadline)
		s.wakeJobLocked(it, errDeadline)
	}
	if len(s.dls) > 0 {
		s.armDeadlineLocked(s.dls[0].deadline(), now)
	}
}

// deadline is a running Work's deadline on the system clock: maxDur after
// it started (kept as that, not as a field of its own).
func (it *item) deadline() time.Time { return it.started.Add(it.maxDur()) }

// heapBefore and setHeapIdx place a running Work in the deadline heap.
func (it *item) heapBefore(o *item) bool { return it.deadline().Before(o.deadline()) }
func (it *item) setHeapIdx(i int32)      { it.dlIdx = i }
