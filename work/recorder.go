package work

import (
	"context"
	"sync"
)

// Recorder is an Observer that records every event and call, for tests. The
// zero value is ready to use and it is safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []Event
	calls  []RecordedCall
}

// RecordedCall is one call a Recorder saw, with how it ended (End is the
// zero value while the call is open).
type RecordedCall struct {
	Call  Call
	End   CallEnd
	Ended bool
}

// Begin records c and returns ctx.
func (r *Recorder) Begin(ctx context.Context, c Call) (context.Context, func(CallEnd)) {
	r.mu.Lock()
	i := len(r.calls)
	r.calls = append(r.calls, RecordedCall{Call: c})
	r.mu.Unlock()
	return ctx, func(e CallEnd) {
		r.mu.Lock()
		r.calls[i].End, r.calls[i].Ended = e, true
		r.mu.Unlock()
	}
}

// Bind returns exec.
func (r *Recorder) Bind(_, exec context.Context, _ Event) context.Context { return exec }

// Event records e.
func (r *Recorder) Event(_ context.Context, e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Events returns a copy of the events seen so far, in arrival order.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// Calls returns a copy of the calls seen so far, in arrival order.
func (r *Recorder) Calls() []RecordedCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]RecordedCall(nil), r.calls...)
}
