package enginetest

import (
	"context"
	"sync"

	"github.com/agentwork/agentwork/work/observe"
)

// Recorder is an observe.Observer that records every event, call and
// Shutdown report, for tests (the suite gives one to every Engine it asks
// for, Config.Observer). The zero value is ready to use and it is safe for
// concurrent use.
type Recorder struct {
	mu        sync.Mutex
	events    []observe.Event
	calls     []RecordedCall
	shutdowns []observe.ShutdownReport
}

// RecordedCall is one call a Recorder saw, with how it ended (End is the
// zero value while the call is open).
type RecordedCall struct {
	Call  observe.ToolCall
	End   observe.ToolCallEnd
	Ended bool
}

// Begin records c and returns ctx.
func (r *Recorder) Begin(ctx context.Context, c observe.ToolCall) (context.Context, func(observe.ToolCallEnd)) {
	r.mu.Lock()
	i := len(r.calls)
	r.calls = append(r.calls, RecordedCall{Call: c})
	r.mu.Unlock()
	return ctx, func(e observe.ToolCallEnd) {
		r.mu.Lock()
		r.calls[i].End, r.calls[i].Ended = e, true
		r.mu.Unlock()
	}
}

// Bind returns exec.
func (r *Recorder) Bind(_, exec context.Context, _ observe.Event) context.Context { return exec }

// Event records e.
func (r *Recorder) Event(_ context.Context, e observe.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Events returns a copy of the events seen so far, in arrival order.
func (r *Recorder) Events() []observe.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]observe.Event(nil), r.events...)
}

// Calls returns a copy of the calls seen so far, in arrival order.
func (r *Recorder) Calls() []RecordedCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]RecordedCall(nil), r.calls...)
}

// ShutdownReported records rep (observe.ShutdownObserver).
func (r *Recorder) ShutdownReported(_ context.Context, rep observe.ShutdownReport) {
	r.mu.Lock()
	r.shutdowns = append(r.shutdowns, rep)
	r.mu.Unlock()
}

// Shutdowns returns a copy of the Shutdown reports seen so far, in
// arrival order.
func (r *Recorder) Shutdowns() []observe.ShutdownReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]observe.ShutdownReport(nil), r.shutdowns...)
}
