package enginetest

import (
	"context"
	"sync"

	"github.com/agentwork/agentwork/work"
)

// Recorder is a work.Observer that records every event and call, for tests
// (the suite gives one to every Engine it asks for, Config.Observer). The
// zero value is ready to use and it is safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []work.Event
	calls  []RecordedCall
}

// RecordedCall is one call a Recorder saw, with how it ended (End is the
// zero value while the call is open).
type RecordedCall struct {
	Call  work.ToolCall
	End   work.ToolCallEnd
	Ended bool
}

// Begin records c and returns ctx.
func (r *Recorder) Begin(ctx context.Context, c work.ToolCall) (context.Context, func(work.ToolCallEnd)) {
	r.mu.Lock()
	i := len(r.calls)
	r.calls = append(r.calls, RecordedCall{Call: c})
	r.mu.Unlock()
	return ctx, func(e work.ToolCallEnd) {
		r.mu.Lock()
		r.calls[i].End, r.calls[i].Ended = e, true
		r.mu.Unlock()
	}
}

// Bind returns exec.
func (r *Recorder) Bind(_, exec context.Context, _ work.Event) context.Context { return exec }

// Event records e.
func (r *Recorder) Event(_ context.Context, e work.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Events returns a copy of the events seen so far, in arrival order.
func (r *Recorder) Events() []work.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]work.Event(nil), r.events...)
}

// Calls returns a copy of the calls seen so far, in arrival order.
func (r *Recorder) Calls() []RecordedCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]RecordedCall(nil), r.calls...)
}
