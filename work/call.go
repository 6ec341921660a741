package work

import (
	"context"
	"errors"

	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/observe"
)

// Call runs a child in the foreground and returns its exact output. The
// child runs on a goroutine of its own while the caller waits for it (so a
// child that calls runtime.Goexit ends only itself); it gets a fresh
// context that carries only what the Observer binds and its Execution (no
// value of ctx), is cancelled when ctx is, and is bounded by
// spec.Budget.MaxDuration (clamped to the engine's maximum) or the
// engine's default. Its own scope is released when it returns. Its
// output is limited as background Work's is (WithMaxResultBytes, lowered by
// spec.MaxResultBytes): a larger output yields ErrChildFailed with Class
// result_too_large and is dropped, never truncated.
//
// A child that panics, calls runtime.Goexit, fails or overruns its
// deadline yields ErrChildFailed with Class set (panic for the first two);
// when ctx ends first and the child returns an error it yields ErrCancelled
// (a child that still returns its output wins). Call waits for the child
// even then. Bad specs, a closed engine, an ended scope and the depth
// limit fail as for Start; a Spec with NeedsApproval is ErrInvalidSpec
// (a foreground call has no Ref to return while it
// would wait for an answer; start it in the background). Close cancels a
// foreground call in progress (it then yields ErrClosed unless the child
// still returns its output) and waits for it.
func (s *Engine) Call(ctx context.Context, spec Spec) (string, error) {
	if s != nil && s.impl != nil {
		return s.impl.Call(ctx, spec)
	}
	if err := s.admissible(&spec); err != nil {
		return "", err
	}
	if spec.NeedsApproval {
		return "", errCallApproval
	}
	ev := observe.Event{Type: observe.EventForeground, Owner: spec.Owner.id, Depth: spec.Owner.depth,
		Target: spec.Target.Label, Kind: spec.Target.Kind, Time: s.clock.Now()}
	exec, cancel := context.WithCancelCause(s.observer.Bind(ctx, context.Background(), ev))
	defer cancel(nil)
	// Admission and registration happen together, so Close either refuses
	// this call or cancels it and waits for it.
	osc := scopeOf(spec.Owner) // nil for a top-level owner
	s.mu.Lock()
	reason := ""
	switch {
	case s.closed, s.draining && osc == nil:
		// Shutdown refuses new top-level calls; a running child's calls
		// are part of the Work it drains.
		reason = "closed"
	case osc != nil && osc.ended:
		reason = reasonScopeEnded
	case spec.Owner.depth >= s.lim.MaxDepth:
		reason = observe.LimitDepth
	}
	if reason != "" {
		s.mu.Unlock()
		return "", s.refusal(reason)
	}
	r := new(run)
	if short := s.reserveLocked(&spec, r); short != "" {
		s.mu.Unlock()
		return "", ErrBudgetExhausted.detail(contract.PoolShort(short))
	}
	scopeID := spec.Owner.id + "/" + newID()
	c := &callExec{s: s, run: r, cctx: exec, emit: s.foregroundEmitter(exec, spec)}
	c.e.rt, r.rt = c, c
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
		stop := s.clock.AfterFunc(d, func() { cancel(errDeadline) })
		defer stop()
	}
	sc := &scope{parent: osc, acct: &r.account}
	scope := Owner{id: scopeID, depth: spec.Owner.depth + 1, sc: sc}
	defer func() {
		var e emission
		s.mu.Lock()
		s.endScopeLocked(sc, scopeID, &e)
		s.unlockAndEmit(&e)
	}()
	c.scope = scope
	exec = context.WithValue(exec, execKey{}, &c.e)
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
	case err == nil && tooLarge(out, spec.MaxResultBytes, s.lim.MaxResultBytes):
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

// callExec is a foreground call's Execution and the state it answers
// from (childRuntime), allocated together. A foreground call has no Work:
// no id, guidance, progress counts or updates.
type callExec struct {
	e     Execution
	s     *Engine
	scope Owner               // the call's own scope
	run   *run                // its budget state
	cctx  context.Context     // its cancellable context: its end ends the boundary's slot wait
	emit  func(observe.Event) // delivers its budget events (foregroundEmitter)
}

func (c *callExec) workID() string            { return "" }
func (c *callExec) ownScope() Owner           { return c.scope }
func (c *callExec) budgetRun() *run           { return c.run }
func (c *callExec) progressCounts() *progress { return nil }
func (c *callExec) progressed()               {}
func (c *callExec) guidance() []string        { return nil }
func (c *callExec) awaitQuestion()            {}
func (c *callExec) takeUnanswered() []int     { return nil }

// awaitAnswer returns at once: a foreground call asks no question.
func (c *callExec) awaitAnswer(context.Context) ([]string, error) { return nil, nil }

// awaitSlot waits for the running slot of the Work the call runs on, if
// any (Engine.awaitSlot).
func (c *callExec) awaitSlot() { c.s.awaitSlot(scopeOf(c.scope), c.cctx) }

// runEvent delivers a budget event of the call, with the engine's time.
func (c *callExec) runEvent(ev observe.Event) {
	ev.Time = c.s.clock.Now()
	c.emit(ev)
}

// reportUpdate refuses every update with observe.UpdateRefusedNotDeclared (there
// is no Work to read it from); an observe.EventUpdate still reports it.
func (c *callExec) reportUpdate(key string, value []byte, question bool) (UpdateReceipt, error) {
	c.run.report(observe.Event{Type: observe.EventUpdate, Bytes: len(value), Question: question, ErrorClass: observe.UpdateRefusedNotDeclared})
	return UpdateReceipt{}, updateRefusal(observe.UpdateRefusedNotDeclared)
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
