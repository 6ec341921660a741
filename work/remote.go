package work

import "context"

// Remote describes a child run that an Engine other than the Supervisor
// executes (for example on a worker process of a durable runner), so that
// the child finds the same Execution in its context as under the
// Supervisor.
type Remote struct {
	// WorkID is the Work's id.
	WorkID string
	// OwnerID and OwnerDepth are the Work's owner's (Owner.ID,
	// Owner.Depth): the child's own scope is one level deeper (the depth
	// limit applies to Work started in it).
	OwnerID    string
	OwnerDepth int
	// Guidance drains the Work's guidance at a model-request boundary:
	// it returns the messages accepted since the last call, in order. It
	// may be nil (no guidance).
	Guidance func() []string
}

// WithRemote returns ctx carrying an Execution for r: WorkID returns
// r.WorkID, Scope an owner one level deeper than the Work's owner, and Guidance
// calls r.Guidance. Budgets and progress are not counted for a remote run
// (its budget methods behave as outside a child run). An Engine calls it
// on the context it runs a child with; the scope's Work is the engine's to
// release when the child returns.
func WithRemote(ctx context.Context, r Remote) context.Context {
	scope := Owner{id: r.OwnerID + "/" + r.WorkID, depth: max(r.OwnerDepth, 0) + 1}
	return context.WithValue(ctx, execKey{}, &Execution{scope: scope, remote: &r})
}

// ClassWorkerLost is the failure class of Work whose attempt died with the
// process running it, under an Engine that runs children in other
// processes (a durable runner does not replay such an attempt unless the
// child is declared retryable).
const ClassWorkerLost = "worker_lost"

// Detail returns an error with e's code and class whose message is e's
// followed by detail, for an Engine outside this package that reports the
// engine's errors. detail must hold no caller-supplied content.
func (e *Error) Detail(detail string) *Error {
	return &Error{Code: e.Code, Class: e.Class, msg: e.msg + ": " + detail}
}

// NewSubscription returns a Subscription that an Engine other than the
// Supervisor feeds, with a buffer of buffer notices (DefaultNoticeBuffer
// when buffer < 1). publish delivers a Notice without waiting (dropped and
// counted when the buffer is full, ignored once closed); closeFn closes the
// channel (idempotent); onClose, when set, runs once when the Subscription
// is closed by either, so that the Engine stops feeding it.
func NewSubscription(buffer int, onClose func()) (sub *Subscription, publish func(Notice), closeFn func()) {
	if buffer < 1 {
		buffer = DefaultNoticeBuffer
	}
	sub = &Subscription{ch: make(chan Notice, buffer), onClose: onClose}
	return sub, sub.send, sub.closeExternal
}

func (sub *Subscription) closeExternal() {
	sub.mu.Lock()
	first := !sub.closed
	if first {
		sub.closed = true
		close(sub.ch)
	}
	sub.mu.Unlock()
	if first && sub.onClose != nil {
		sub.closeOnce.Do(sub.onClose)
	}
}
