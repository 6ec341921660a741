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

// progress is a Work's live counts. The child's goroutines write it
// without the engine's lock; it never blocks them.
type progress struct {
	done, total, requests, tools atomic.Int64
	last                         atomic.Int64 // unix nanoseconds of the last EventProgress; 0: none yet
	ended                        atomic.Bool  // the Work is terminal: no more EventProgress
	pending                      atomic.Bool  // a report waits for the Work's emit lock
}

func (p *progress) snapshot() observe.Progress {
	return observe.Progress{Done: p.done.Load(), Total: p.total.Load(),
		ModelRequests: p.requests.Load(), ToolCalls: p.tools.Load()}
}

// counts returns the Work's progress counts, nil when none are kept (a
// foreground call, and the zero Execution).
func (e *Execution) counts() *progress {
	if e.rt == nil {
		return nil
	}
	return e.rt.progressCounts()
}

// Progress returns the Work's progress counts so far (the zero Progress
// for a foreground call), for an Engine that carries them elsewhere.
func (e *Execution) Progress() observe.Progress {
	if e == nil {
		return observe.Progress{}
	}
	if p := e.counts(); p != nil {
		return p.snapshot()
	}
	return observe.Progress{}
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
	if p := e.counts(); p != nil {
		p.done.Store(max(done, 0))
		p.total.Store(max(total, 0))
		e.rt.progressed()
	}
}

// countRequest adds one to the Work's ModelRequests count, like
// ReportProgress (work/boundary's BeginRequest, for each request it
// grants).
func (e *Execution) countRequest() {
	if e == nil {
		return
	}
	if p := e.counts(); p != nil {
		p.requests.Add(1)
		e.rt.progressed()
	}
}

// countTool adds one to the Work's ToolCalls count, like ReportProgress
// (work/boundary's BeginToolCall, for each call it allows).
func (e *Execution) countTool() {
	if e == nil {
		return
	}
	if p := e.counts(); p != nil {
		p.tools.Add(1)
		e.rt.progressed()
	}
}
