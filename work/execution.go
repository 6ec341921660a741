package work

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentwork/agentwork/work/observe"
)

type execKey struct{}

// execCtx is a running Work's context: a context cancellable with a cause,
// with the Execution as the execKey value. It lives in the item, and the
// cancellable context under it (context.WithCancelCause: two allocations)
// is made only when something asks for it: Done, Err or a value other than
// the Execution (context.WithCancel, context.AfterFunc and context.Cause
// on it, or on a context derived from it, ask for it). A child that never
// looks at its context never makes one. A cancellation that comes first is
// recorded, and the context made later is cancelled with its cause at
// once: the child sees what it would have seen had the context been made
// as the Work started.
//
// Its parent is the Work's bound context (item.ctx). The engine cancels it
// with cancel and reads why it ended with cause, neither of which makes it.
type execCtx struct {
	it   *item
	mu   sync.Mutex  // guards why and the making of inner
	made atomic.Bool // inner is set (never unset): read without mu
	// why is the cause of the first cancellation while inner is not made
	// (causeNone: not cancelled).
	why         causeCode
	inner       context.Context
	cancelInner context.CancelCauseFunc
}

// causeCode is one of the causes the engine cancels a Work's context with
// (causes[c]).
type causeCode uint8

const (
	causeNone      causeCode = iota // not cancelled
	causeCanceled                   // a nil cause: context.Canceled
	causeRequested                  // errCancelRequested
	causeClosed                     // errClosed
	causeDeadline                   // errDeadline
)

var causes = [...]error{causeCanceled: nil, causeRequested: errCancelRequested, causeClosed: errClosed, causeDeadline: errDeadline}

// codeOf returns cause's code. The engine cancels with no other cause.
func codeOf(cause error) causeCode {
	for c := causeCanceled; int(c) < len(causes); c++ {
		if causes[c] == cause {
			return c
		}
	}
	panic("work: a Work's context cancelled with a cause the engine does not use")
}

// get returns the cancellable context, making it on first use.
func (c *execCtx) get() context.Context {
	if c.made.Load() {
		return c.inner
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.makeLocked()
}

func (c *execCtx) makeLocked() context.Context {
	if !c.made.Load() {
		c.inner, c.cancelInner = context.WithCancelCause(c.it.ctx)
		if c.why != causeNone {
			c.cancelInner(causes[c.why])
		}
		c.made.Store(true)
	}
	return c.inner
}

// cancel cancels the context with cause (nil, errCancelRequested,
// errClosed or errDeadline); the first cancellation's cause stays.
func (c *execCtx) cancel(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.made.Load() {
		c.cancelInner(cause)
		return
	}
	if c.why == causeNone {
		c.why = codeOf(cause)
	}
}

// cause returns context.Cause(c) and c.Err() without making the context
// (unless its parent, which the Observer's Bind gave, can end).
func (c *execCtx) cause() (cause, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.made.Load() && c.it.ctx.Done() == nil {
		if c.why == causeNone {
			return nil, nil
		}
		if cause = causes[c.why]; cause == nil {
			cause = context.Canceled
		}
		return cause, context.Canceled
	}
	in := c.makeLocked()
	return context.Cause(in), in.Err()
}

func (c *execCtx) Deadline() (time.Time, bool) { return c.it.ctx.Deadline() }
func (c *execCtx) Done() <-chan struct{}       { return c.get().Done() }
func (c *execCtx) Err() error                  { return c.get().Err() }
func (c *execCtx) String() string              { return fmt.Sprint(c.get()) }

func (c *execCtx) Value(key any) any {
	if key == (execKey{}) {
		return &c.it.exec
	}
	return c.get().Value(key)
}

// Execution is a running child's handle on its own Work, found in the
// child's context with ExecutionFrom. Its methods are safe for concurrent
// use. A nil or zero *Execution (what ExecutionFrom returns outside a
// child) behaves as outside a child run: no Work id, the zero scope, no
// budget, and nothing is counted.
type Execution struct {
	s  *Supervisor
	it *item // nil for a foreground call and a remote run
	// x is a foreground call's or a remote run's own state; nil for a
	// background Work's, which its item holds (the accessors below).
	x *execAux
}

// execAux is what an Execution holds besides its Work: a background
// Work's is read from its item, a foreground call's and a remote run's
// are their own.
type execAux struct {
	scope Owner
	run   *run            // the child's budget state; nil outside a child run
	cctx  context.Context // the child's cancellable context: its end ends the boundary's slot wait
	// remote is set for a child another Engine runs (WithRemote), with
	// its progress counts.
	remote *remoteRun
	prog   *progress
}

// auxExecution is an Execution and its own state, allocated together.
type auxExecution struct {
	e Execution
	x execAux
}

// newAuxExecution returns an Execution with state x of its own.
func newAuxExecution(s *Supervisor, x execAux) *Execution {
	a := &auxExecution{e: Execution{s: s}, x: x}
	a.e.x = &a.x
	return &a.e
}

// scope returns the child's own owner scope (the zero Owner for the zero
// Execution).
func (e *Execution) scope() Owner {
	switch {
	case e.x != nil:
		return e.x.scope
	case e.it != nil:
		it := e.it
		return Owner{id: it.scopeID, depth: it.owner.depth + 1, sc: it.sc}
	}
	return Owner{}
}

// run returns the child's budget state, nil outside a child run.
func (e *Execution) run() *run {
	switch {
	case e.x != nil:
		return e.x.run
	case e.it != nil:
		return &e.it.brun
	}
	return nil
}

// cctx returns the child's cancellable context (a running Work's, a
// foreground call's or a remote run's: never the zero Execution's).
func (e *Execution) cctx() context.Context {
	if e.x != nil {
		return e.x.cctx
	}
	return &e.it.xctx
}

// remote returns a remote run's state; nil for the Supervisor's children.
func (e *Execution) remote() *remoteRun {
	if e.x != nil {
		return e.x.remote
	}
	return nil
}

// prog returns a remote run's progress counts; nil for the Supervisor's
// children (a background Work's are its item's).
func (e *Execution) prog() *progress {
	if e.x != nil {
		return e.x.prog
	}
	return nil
}

// ExecutionFrom returns the Execution of the child whose context ctx is (or
// derives from), and whether there is one.
func ExecutionFrom(ctx context.Context) (*Execution, bool) {
	e, ok := ctx.Value(execKey{}).(*Execution)
	return e, ok
}

// WorkID returns the Work's id, or "" for a foreground call.
func (e *Execution) WorkID() string {
	if e == nil {
		return ""
	}
	if r := e.remote(); r != nil {
		return r.WorkID
	}
	if e.it == nil {
		return ""
	}
	return e.it.id()
}

// Scope returns the child's own owner scope, one level deeper than its
// owner: background Work the child starts belongs to it, and all of it,
// visible or detached, is cancelled and forgotten when the child ends.
func (e *Execution) Scope() Owner {
	if e == nil {
		return Owner{}
	}
	return e.scope()
}

// Call runs a child in the foreground and returns its exact output. The
// child runs on a goroutine of its own while the caller waits for it (so a
// child that calls runtime.Goexit ends only itself); it gets a fresh
// context that carries only what the Observer binds and its Execution (no
// value of ctx), is cancelled when ctx is, and is bounded by
// spec.Budget.MaxDuration (clamped to the Supervisor's maximum) or the
// Supervisor's default. Its own scope is released when it returns. Its
// output is limited as background Work's is (WithMaxResultBytes, lowered by
// spec.MaxResultBytes): a larger output yields ErrChildFailed with Class
// result_too_large and is dropped, never truncated.
//
// A child that panics, calls runtime.Goexit, fails or overruns its
// deadline yields ErrChildFailed with Class set (panic for the first two);
// when ctx ends first and the child returns an error it yields ErrCancelled
// (a child that still returns its output wins). Call waits for the child
// even then. Bad specs, a closed Supervisor, an ended scope and the depth
// limit fail as for Start; a Spec with NeedsApproval is ErrInvalidSpec
// (ApprovalCallRefusal: a foreground call has no Ref to return while it
// would wait for an answer; start it in the background). Close cancels a
// foreground call in progress (it then yields ErrClosed unless the child
// still returns its output) and waits for it.
func (s *Supervisor) Call(ctx context.Context, spec Spec) (string, error) {
	if err := s.admissible(&spec); err != nil {
		return "", err
	}
	if spec.NeedsApproval {
		return "", errCallApproval
	}
	ev := observe.Event{Type: observe.EventForeground, Owner: spec.Owner.id, Depth: spec.Owner.depth,
		Target: spec.Target.Label, Kind: spec.Target.Kind, Time: s.cfg.clock.Now()}
	exec, cancel := context.WithCancelCause(s.cfg.observer.Bind(ctx, context.Background(), ev))
	defer cancel(nil)
	// Admission and registration happen together, so Close either refuses
	// this call or cancels it and waits for it.
	s.mu.Lock()
	reason := ""
	switch {
	case s.closed, s.draining && spec.Owner.sc == nil:
		// Shutdown refuses new top-level calls; a running child's calls
		// are part of the Work it drains.
		reason = "closed"
	case spec.Owner.sc != nil && spec.Owner.sc.ended:
		reason = reasonScopeEnded
	case spec.Owner.depth >= s.cfg.maxDepth:
		reason = LimitDepth
	}
	if reason != "" {
		s.mu.Unlock()
		return "", s.refusal(reason)
	}
	r := new(run)
	if short := s.reserveLocked(&spec, r); short != "" {
		s.mu.Unlock()
		return "", PoolRefusal(short)
	}
	scopeID := spec.Owner.id + "/" + newID()
	r.emit = s.foregroundEmitter(exec, spec)
	defer s.endForeground(r, scopeID, exec)
	fg := &foreground{cancel: cancel, target: spec.Target.Label, done: make(chan struct{})}
	s.foreground[fg] = struct{}{}
	s.live.Add(1)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.foreground, fg)
		close(fg.done)
		s.mu.Unlock()
		s.exited()
	}()
	stopParent := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	defer stopParent()
	if d := r.maxDur; d > 0 {
		stop := s.cfg.clock.AfterFunc(d, func() { cancel(errDeadline) })
		defer stop()
	}
	sc := &scope{parent: spec.Owner.sc, acct: &r.account}
	scope := Owner{id: scopeID, depth: spec.Owner.depth + 1, sc: sc}
	defer func() {
		var e emission
		s.mu.Lock()
		s.endScopeLocked(sc, scopeID, &e)
		s.unlockAndEmit(&e)
	}()
	exec = context.WithValue(exec, execKey{}, newAuxExecution(s, execAux{scope: scope, run: r, cctx: exec}))
	if spec.Job != nil {
		spec.Run = s.foregroundJob(spec.Job, spec.Input) // job.go
	}
	type outcome struct {
		out      string
		err      error
		panicked bool
	}
	ch := make(chan outcome, 1)
	go func() {
		if spec.Target.Kind == KindAgent {
			growAgentStack()
		}
		s.labelChild()
		returned := false
		defer func() {
			if !returned { // runtime.Goexit
				ch <- outcome{panicked: true}
			}
		}()
		out, err, panicked := invoke(exec, spec.Run)
		returned = true
		ch <- outcome{out, err, panicked}
	}()
	res := <-ch
	out, err := res.out, res.err
	switch {
	case res.panicked:
		return "", childFailed(ClassPanic)
	case errors.Is(context.Cause(exec), errDeadline):
		return "", childFailed(ClassDeadline)
	case err != nil && errors.Is(context.Cause(exec), errClosed):
		return "", ErrClosed
	case err == nil && tooLarge(out, spec.MaxResultBytes, s.cfg.maxResultBytes):
		return "", childFailed(ClassResultTooLarge) // as background Work over the limit
	case err == nil:
		return out, nil // completion wins over a late cancellation
	case ctx.Err() != nil:
		return "", ErrCancelled
	case r.refused():
		return "", childFailed(ClassBudgetExhausted)
	}
	return "", childFailed(ClassError)
}

// tooLarge reports whether out exceeds the result-byte limit: a Spec's
// override specMax clamped to the Supervisor's def (0: none).
func tooLarge(out string, specMax, def int) bool {
	limit := clamp(specMax, def)
	return limit > 0 && len(out) > limit
}

// clamp returns a Spec's override v when it is positive and does not
// exceed the Supervisor's ceiling def (0: none), else def.
func clamp[T int | time.Duration](v, def T) T {
	if v > 0 && (def == 0 || v < def) {
		return v
	}
	return def
}

// foreground is a foreground call in progress, for Close.
type foreground struct {
	cancel context.CancelCauseFunc
	target string        // the target label, for Shutdown's report
	done   chan struct{} // closed when the call has returned
}

// growAgentStack grows a foreground agent child's new goroutine's stack to
// 32 KB at once, while it is one frame deep. An agent child (a langchaingo
// executor: prompt templates, JSON) needs about that much, and would
// otherwise grow it by doubling, 2 KB to 32 KB, each time copying a deeper
// stack. Background children are left as they are (memory per running
// Work).
//
//go:noinline
func growAgentStack() {
	var buf [agentHeadroom]byte
	keepStack(buf[:])
}

// agentHeadroom is what growAgentStack reserves: the stack grows to the
// next power of two above it (32 KB).
const agentHeadroom = 16 << 10
