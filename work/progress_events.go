package work

import "github.com/agentwork/agentwork/work/observe"

// progressCounts returns the Work's progress counts.
func (it *item) progressCounts() *progress { return &it.prog }

// progressed is Engine.progressed of the Work.
func (it *item) progressed() { it.s.progressed(it) }

// progressed emits observe.EventProgress for it when the last one is at least
// progressInterval old (by the engine's clock). It never waits: when
// another event of the Work is being delivered, the report stays pending
// and the deliverer emits it as it finishes (flushProgress), with the
// counts of that moment.
func (s *Engine) progressed(it *item) {
	p := &it.prog
	if last := p.last.Load(); last != 0 && s.clock.Now().UnixNano()-last < int64(progressInterval) {
		return
	}
	p.pending.Store(true)
	s.flushProgress(it)
}

// flushProgress emits a pending progress report of it unless another
// goroutine holds its emit lock (that one flushes after unlocking).
func (s *Engine) flushProgress(it *item) {
	p := &it.prog
	for p.pending.Load() {
		if !it.emitMu.TryLock() {
			return
		}
		// Holding the emit lock: a terminal event is either fully
		// delivered (ended is set before it is queued) or not yet started.
		if p.pending.Swap(false) && !p.ended.Load() {
			now := s.clock.Now()
			last := p.last.Load()
			if (last == 0 || now.UnixNano()-last >= int64(progressInterval)) && p.last.CompareAndSwap(last, now.UnixNano()) {
				s.observer.Event(it.ctx, observe.Event{Type: observe.EventProgress, WorkID: it.id(),
					Owner: it.owner.id, Depth: it.owner.depth, Target: it.target.Label,
					Kind: it.target.Kind, Time: now, Progress: p.snapshot()})
			}
		}
		it.emitMu.Unlock()
	}
}
