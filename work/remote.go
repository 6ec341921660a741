package work

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentwork/agentwork/work/observe"
)

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
	// Budget is the child's effective budget, resolved by the Engine
	// (defaults and ceiling applied): its turns, tool calls and tokens are
	// counted at the boundary as under the Supervisor (BeginRequest,
	// EndRequest, BeginToolCall). Zero limits are not enforced; the Engine
	// enforces MaxDuration.
	Budget Budget
	// FailOnBudget refuses the final request when the budget runs out
	// (Spec.FailOnBudget).
	FailOnBudget bool
	// Event, when set, receives the run's content-free events as they
	// happen, with WorkID, Owner, Depth and Time set (the Engine adds the
	// target): observe.EventBudgetExhausted when a budget runs out,
	// observe.EventProgress at most once per second when the child
	// reports progress, and observe.EventUpdate for each update Update decided
	// (not for a duplicate). It must not block.
	Event func(observe.Event)
	// Update, when set, decides on an update the child reports
	// (ReportUpdate): the Engine keeps the Work's UpdateLog (Accept, with
	// End once the Work is ending) and answers its receipt, or the
	// refusal reason, which the Execution turns into ErrUpdateRefused.
	// nil refuses every update with UpdateRefusedNotDeclared (a Work that
	// declares none).
	Update func(key string, value []byte, question bool) (UpdateReceipt, string)
	// AwaitAnswer, when set, is the wait of a question the child asked
	// (an accepted update with question set): it blocks until guidance
	// for the Work has arrived since the question (true; the Execution
	// then drains it with Guidance), or until the question's timeout
	// passes or ctx ends (false). The Execution calls it at the child's
	// next BeginRequest (with the context given to WithRemote) and from
	// AwaitAnswer. nil: a question is never waited for, and counts as
	// unanswered.
	AwaitAnswer func(ctx context.Context) bool
}

// remoteRun is the Remote of an Execution, with its Execution, budget
// state, progress counts and question state, allocated together.
type remoteRun struct {
	Remote
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

// WithRemote returns ctx carrying an Execution for r: WorkID returns
// r.WorkID, Scope an owner one level deeper than the Work's owner, Guidance
// calls r.Guidance, the budget methods count against r.Budget, and
// work.ReportProgress, BeginRequest and BeginToolCall count progress
// reported through r.Event, and ReportUpdate, AwaitAnswer and a question's
// wait at BeginRequest use r.Update and r.AwaitAnswer. An Engine calls it on the context it runs a
// child with; the scope's Work is the engine's to release when the child
// returns. Usage and Exhausted tell it what the run spent.
func WithRemote(ctx context.Context, r Remote) context.Context {
	rr := &remoteRun{Remote: r, ctx: ctx}
	rr.e.rt = rr
	rr.scope = Owner{id: r.OwnerID + "/" + r.WorkID, depth: max(r.OwnerDepth, 0) + 1}
	rr.ru.maxDur, rr.ru.fail = r.Budget.MaxDuration, r.FailOnBudget
	for i, v := range r.Budget.dims() {
		rr.ru.m[i].limit = max(v, 0)
	}
	if r.Event != nil {
		rr.ru.rt = rr
	}
	return context.WithValue(ctx, execKey{}, &rr.e)
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
	rec, reason := UpdateReceipt{}, UpdateRefusedNotDeclared
	if r.Update != nil {
		rec, reason = r.Update(key, value, question)
	}
	if reason == "" && rec.Duplicate {
		return rec, nil
	}
	r.ru.report(observe.Event{Type: observe.EventUpdate, Seq: rec.Seq, Bytes: len(value), Question: question, ErrorClass: reason})
	if reason != "" {
		return UpdateReceipt{}, UpdateRefusal(reason)
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

// Exhausted returns the budget that ran out ("" while none has) and
// whether the boundary refused a request, for an Engine deciding a
// finished child's failure class (ClassBudgetExhausted when refused and
// the child failed).
func (e *Execution) Exhausted() (budget string, refused bool) {
	if e == nil {
		return "", false
	}
	return e.run().exhaustedBudget(), e.run().refused()
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
	if e == nil {
		return &Error{msg: detail}
	}
	return &Error{Code: e.Code, Class: e.Class, msg: e.msg + ": " + detail}
}

// NewSubscription returns a Subscription that an Engine other than the
// Supervisor feeds, with a buffer of buffer notices (defaultNoticeBuffer
// when buffer < 1). publish delivers a Notice without waiting (dropped and
// counted when the buffer is full, except that a settlement takes the
// place of the oldest buffered notice of another kind, as Subscribe
// describes; ignored once closed); closeFn closes the
// channel (idempotent); onClose, when set, runs once when the Subscription
// is closed by either, so that the Engine stops feeding it.
func NewSubscription(buffer int, onClose func()) (sub *Subscription, publish func(Notice), closeFn func()) {
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
