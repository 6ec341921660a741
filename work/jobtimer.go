package work

import "time"

// The poll timers of waiting jobs share one Clock timer: the waiting jobs
// are kept in a min-heap by when their next poll is due (s.jobs.timers,
// guarded by s.mu) and the one timer is armed for the earliest. A waiting
// job then costs a heap entry, not a runtime timer and a closure. The
// timer is re-armed when a job due earlier than it joins, and stopped when
// the heap empties; a timer that fires early (for a job that left) finds
// nothing due and re-arms for the next. Each arming has a generation, so a
// timer that had already fired when it was replaced does nothing.

// jobTimers is the heap and its timer.
type jobTimers struct {
	timers []*item     // waiting jobs, a min-heap by jobWait.due
	stop   func() bool // the armed timer's; nil when none is armed
	at     time.Time   // when it fires
	gen    uint64      // its generation
}

// addTimerLocked adds it, whose jw.due is set, to the heap.
func (s *Engine) addTimerLocked(it *item, jw *jobWait) {
	t := &s.jobs.timer
	jw.tIdx = int32(len(t.timers) + 1)
	t.timers = append(t.timers, it)
	s.timerUp(len(t.timers) - 1)
	if t.stop == nil || jw.due.Before(t.at) {
		s.armTimerLocked(jw.due)
	}
}

// removeTimerLocked takes it out of the heap, if it is there, and stops
// the timer when the heap is empty.
func (s *Engine) removeTimerLocked(jw *jobWait) {
	t := &s.jobs.timer
	i := int(jw.tIdx) - 1
	if i < 0 {
		return
	}
	last := len(t.timers) - 1
	if i != last {
		s.timerSwap(i, last)
	}
	t.timers[last] = nil
	t.timers = t.timers[:last]
	jw.tIdx = 0
	if i != last && !s.timerUp(i) {
		s.timerDown(i)
	}
	if len(t.timers) == 0 && t.stop != nil {
		t.stop()
		t.stop, t.gen = nil, t.gen+1
	}
}

func (s *Engine) armTimerLocked(at time.Time) {
	t := &s.jobs.timer
	if t.stop != nil {
		t.stop()
	}
	t.gen++
	gen := t.gen
	t.at = at
	t.stop = s.clock.AfterFunc(at.Sub(s.clock.Now()), func() { s.timerFired(gen) })
}

// timerFired runs as the timer of generation gen fires: every job whose
// poll is due leaves the heap for its poll (pollDueLocked), in order of
// due time, and the timer is re-armed for the next.
func (s *Engine) timerFired(gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &s.jobs.timer
	if gen != t.gen {
		return
	}
	t.stop = nil
	now := s.clock.Now()
	for len(t.timers) > 0 && !t.timers[0].job.due.After(now) {
		it := t.timers[0]
		s.removeTimerLocked(it.job)
		s.pollDueLocked(it)
	}
	if len(t.timers) > 0 && t.stop == nil {
		s.armTimerLocked(t.timers[0].job.due)
	}
}

func (s *Engine) timerSwap(i, j int) {
	ts := s.jobs.timer.timers
	ts[i], ts[j] = ts[j], ts[i]
	ts[i].job.tIdx, ts[j].job.tIdx = int32(i+1), int32(j+1)
}

// timerUp moves the entry at i up to its place and reports whether it
// moved.
func (s *Engine) timerUp(i int) bool {
	ts := s.jobs.timer.timers
	moved := false
	for i > 0 {
		p := (i - 1) / 2
		if !ts[i].job.due.Before(ts[p].job.due) {
			break
		}
		s.timerSwap(i, p)
		i, moved = p, true
	}
	return moved
}

func (s *Engine) timerDown(i int) {
	ts := s.jobs.timer.timers
	n := len(ts)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && ts[r].job.due.Before(ts[l].job.due) {
			m = r
		}
		if !ts[m].job.due.Before(ts[i].job.due) {
			return
		}
		s.timerSwap(i, m)
		i = m
	}
}
