package work

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentwork/agentwork/work/internal/seam"
	"github.com/agentwork/agentwork/work/observe"
)

// remoteRun is the Remote of an Execution, with its Execution, budget
// state, progress counts and question state, allocated together.
type remoteRun struct {
	seam.Remote
	e          Execution
	scope      Owner           // the child's own scope
	ru         run             // the child's budget state
	prog       progress        // its progress counts
	ctx        context.Context // what WithRemote was given: the question wait's
	asking     atomic.Bool     // asked holds a question
	mu         sync.Mutex      // guards asked and unanswered
	asked      []int           // the questions accepted and not yet waited for
	unanswered []int           // the questions whose wait gave up, not yet reported
}

// What this package gives work/driver (package seam): a remote run's
// Execution, what its budget refused, and a Subscription another engine
// feeds.
func init() {
	seam.Attach = attachRemote
	seam.Exhausted = func(ex any) (string, bool) {
		e, _ := ex.(*Execution)
		if e == nil {
			return "", false
		}
		return e.run().exhaustedBudget(), e.run().refused()
	}
	seam.NewSubscription = func(buffer int, onClose func()) (any, any, func()) {
		sub, publish, closeFn := newSubscription(buffer, onClose)
		return sub, publish, closeFn
	}
}

// attachRemote returns ctx carrying an Execution for r (work/driver's
// WithRemote documents it), and that Execution.
func attachRemote(ctx context.Context, r seam.Remote) (context.Context, any) {
	rr := &remoteRun{Remote: r, ctx: ctx}
	rr.e.rt = rr
	rr.scope = Owner{id: r.OwnerID + "/" + r.WorkID, depth: max(r.OwnerDepth, 0) + 1}
	rr.ru.maxDur, rr.ru.fail = r.MaxDuration, r.FailOnBudget
	for i, v := range r.Dims {
		rr.ru.m[i].limit = max(v, 0)
	}
	if r.Event != nil {
		rr.ru.rt = rr
	}
	return context.WithValue(ctx, execKey{}, &rr.e), &rr.e
}

// A remote run is its child's runtime (childRuntime): its methods follow.

func (r *remoteRun) workID() string            { return r.WorkID }
func (r *remoteRun) ownScope() Owner           { return r.scope }
func (r *remoteRun) budgetRun() *run           { return &r.ru }
func (r *remoteRun) progressCounts() *progress { return &r.prog }

// awaitSlot does nothing: another Engine's running slots are its own.
func (r *remoteRun) awaitSlot() {}

// guidance calls Remote.Guidance.
func (r *remoteRun) guidance() []string {
	if r.Guidance == nil {
		return nil
	}
	return r.Guidance()
}

// reportUpdate is ReportUpdate under another Engine: r.Update decides.
func (r *remoteRun) reportUpdate(key string, value []byte, question bool) (UpdateReceipt, error) {
	rec, reason := UpdateReceipt{}, observe.UpdateRefusedNotDeclared
	if r.Update != nil {
		rec.Seq, rec.Duplicate, reason = r.Update(key, value, question)
	}
	if reason == "" && rec.Duplicate {
		return rec, nil
	}
	r.ru.report(observe.Event{Type: observe.EventUpdate, Seq: rec.Seq, Bytes: len(value), Question: question, ErrorClass: reason})
	if reason != "" {
		return UpdateReceipt{}, updateRefusal(reason)
	}
	if question {
		r.mu.Lock()
		r.asked = append(r.asked, rec.Seq)
		r.asking.Store(true)
		r.mu.Unlock()
	}
	return rec, nil
}

// awaitQuestion waits, with the context given to WithRemote, for the
// answer to the questions asked, if any.
func (r *remoteRun) awaitQuestion() {
	if r.asking.Load() {
		r.await(r.ctx)
	}
}

// awaitAnswer is AwaitAnswer under another Engine (r.AwaitAnswer).
func (r *remoteRun) awaitAnswer(ctx context.Context) ([]string, error) {
	if r.asking.Load() && !r.await(ctx) {
		if ctx.Err() != nil {
			return nil, ErrCancelled
		}
		r.takeUnanswered()
		return nil, ErrUnanswered
	}
	return r.guidance(), nil
}

// await waits for the answer to the questions asked (r.AwaitAnswer)
// and reports whether one came; unanswered questions are kept for
// Unanswered unless ctx ended.
func (r *remoteRun) await(ctx context.Context) bool {
	r.mu.Lock()
	n := len(r.asked)
	r.mu.Unlock()
	if n == 0 {
		return true
	}
	ok := r.AwaitAnswer != nil && r.AwaitAnswer(ctx)
	r.mu.Lock()
	seqs := r.asked[:n:n]
	r.asked = r.asked[n:]
	if len(r.asked) == 0 {
		r.asked = nil
		r.asking.Store(false)
	}
	if !ok && ctx.Err() == nil {
		r.unanswered = append(r.unanswered, seqs...)
	}
	r.mu.Unlock()
	return ok
}

// takeUnanswered returns the questions whose wait gave up, and forgets
// them.
func (r *remoteRun) takeUnanswered() []int {
	r.mu.Lock()
	seqs := r.unanswered
	r.unanswered = nil
	r.mu.Unlock()
	return seqs
}

// runEvent delivers an event of a remote run through Remote.Event.
func (r *remoteRun) runEvent(ev observe.Event) {
	ev.WorkID, ev.Owner, ev.Depth = r.WorkID, r.OwnerID, max(r.OwnerDepth, 0)
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	r.Event(ev)
}

// progressed emits observe.EventProgress for a remote run when the last one
// is at least a second old.
func (r *remoteRun) progressed() {
	if r.Event == nil {
		return
	}
	p := &r.prog
	now := time.Now()
	last := p.last.Load()
	if last != 0 && now.UnixNano()-last < int64(progressInterval) {
		return
	}
	if p.last.CompareAndSwap(last, now.UnixNano()) {
		r.runEvent(observe.Event{Type: observe.EventProgress, Time: now, Progress: p.snapshot()})
	}
}

// ClassWorkerLost is the failure class of Work whose attempt died with the
// process running it, under an Engine that runs children in other
// processes (a durable runner does not replay such an attempt unless the
// child is declared retryable).
const ClassWorkerLost = "worker_lost"

// detail returns an error with e's code and class whose message is e's
// followed by detail. detail must hold no caller-supplied content.
func (e *Error) detail(detail string) *Error {
	if e == nil {
		return &Error{msg: detail}
	}
	return &Error{Code: e.Code, Class: e.Class, msg: e.msg + ": " + detail}
}

// newSubscription returns a Subscription that an Engine other than the
// in-process one feeds (work/driver's, through package seam), with a buffer of buffer notices (defaultNoticeBuffer
// when buffer < 1). publish delivers a Notice without waiting (dropped and
// counted when the buffer is full, except that a settlement takes the
// place of the oldest buffered notice of another kind, as Subscribe
// describes; ignored once closed); closeFn closes the
// channel (idempotent); onClose, when set, runs once when the Subscription
// is closed by either, so that the Engine stops feeding it.
func newSubscription(buffer int, onClose func()) (sub *Subscription, publish func(Notice), closeFn func()) {
	if buffer < 1 {
		buffer = defaultNoticeBuffer
	}
	sub = &Subscription{ch: make(chan Notice, buffer)}
	sub.end = func() {
		if sub.shut() && onClose != nil {
			onClose()
		}
	}
	return sub, sub.send, sub.end
}
