package work

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/agentwork/agentwork/work/observe"
)

// progressInterval is the least time between two observe.EventProgress events of
// one Work: reports in between only update the counts.
const progressInterval = time.Second

// Progress is a Work's progress as counts only (observe.Progress).
type Progress = observe.Progress

// progress is a Work's live counts. The child's goroutines write it
// without the Supervisor's lock; it never blocks them.
type progress struct {
	done, total, requests, tools atomic.Int64
	last                         atomic.Int64 // unix nanoseconds of the last EventProgress; 0: none yet
	ended                        atomic.Bool  // the Work is terminal: no more EventProgress
	pending                      atomic.Bool  // a report waits for the Work's emit lock
}

func (p *progress) snapshot() Progress {
	return Progress{Done: p.done.Load(), Total: p.total.Load(),
		ModelRequests: p.requests.Load(), ToolCalls: p.tools.Load()}
}

// Progress returns the Work's progress counts so far (the zero Progress
// for a foreground call), for an Engine that carries them elsewhere.
func (e *Execution) Progress() Progress {
	if e == nil {
		return Progress{}
	}
	switch {
	case e.it != nil:
		return e.it.prog.snapshot()
	case e.prog() != nil:
		return e.prog().snapshot()
	}
	return Progress{}
}

// ReportProgress sets the Done and Total counts of the background Work
// whose child ctx belongs to (negative values count as 0). It never blocks
// and does not allocate; at most one observe.EventProgress per second per Work
// reaches the Observer (reports in between only update the counts), on the
// reporting goroutine, and none after the Work is terminal. It does nothing
// when ctx is not a child's, or is a foreground call's.
func ReportProgress(ctx context.Context, done, total int64) {
	if e, ok := ExecutionFrom(ctx); ok {
		e.reportProgress(done, total)
	}
}

// reportProgress is ReportProgress on e.
func (e *Execution) reportProgress(done, total int64) {
	if e == nil {
		return
	}
	if e.it == nil {
		if e.prog() != nil {
			e.prog().done.Store(max(done, 0))
			e.prog().total.Store(max(total, 0))
			e.remoteProgressed()
		}
		return
	}
	e.it.prog.done.Store(max(done, 0))
	e.it.prog.total.Store(max(total, 0))
	e.s.progressed(e.it)
}

// CountModelRequest adds one to the Work's ModelRequests count, like
// ReportProgress. Agent adapters call it at each model request.
func (e *Execution) CountModelRequest() {
	if e == nil {
		return
	}
	if e.it == nil {
		if e.prog() != nil {
			e.prog().requests.Add(1)
			e.remoteProgressed()
		}
		return
	}
	e.it.prog.requests.Add(1)
	e.s.progressed(e.it)
}

// CountToolCall adds one to the Work's ToolCalls count, like
// ReportProgress. Agent adapters call it at each tool call.
func (e *Execution) CountToolCall() {
	if e == nil {
		return
	}
	if e.it == nil {
		if e.prog() != nil {
			e.prog().tools.Add(1)
			e.remoteProgressed()
		}
		return
	}
	e.it.prog.tools.Add(1)
	e.s.progressed(e.it)
}

// progressed emits observe.EventProgress for it when the last one is at least
// progressInterval old (by the Supervisor's clock). It never waits: when
// another event of the Work is being delivered, the report stays pending
// and the deliverer emits it as it finishes (flushProgress), with the
// counts of that moment.
func (s *Supervisor) progressed(it *item) {
	p := &it.prog
	if last := p.last.Load(); last != 0 && s.cfg.clock.Now().UnixNano()-last < int64(progressInterval) {
		return
	}
	p.pending.Store(true)
	s.flushProgress(it)
}

// flushProgress emits a pending progress report of it unless another
// goroutine holds its emit lock (that one flushes after unlocking).
func (s *Supervisor) flushProgress(it *item) {
	p := &it.prog
	for p.pending.Load() {
		if !it.emitMu.TryLock() {
			return
		}
		// Holding the emit lock: a terminal event is either fully
		// delivered (ended is set before it is queued) or not yet started.
		if p.pending.Swap(false) && !p.ended.Load() {
			now := s.cfg.clock.Now()
			last := p.last.Load()
			if (last == 0 || now.UnixNano()-last >= int64(progressInterval)) && p.last.CompareAndSwap(last, now.UnixNano()) {
				s.cfg.observer.Event(it.ctx, observe.Event{Type: observe.EventProgress, WorkID: it.id(),
					Owner: it.owner.id, Depth: it.owner.depth, Target: it.target.Label,
					Kind: it.target.Kind, Time: now, Progress: p.snapshot()})
			}
		}
		it.emitMu.Unlock()
	}
}
