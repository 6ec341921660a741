package work

import (
	"context"
	"errors"
	"time"
)

type execKey struct{}

// Execution is a running child's handle on its own Work, found in the
// child's context with ExecutionFrom. Its methods are safe for concurrent
// use.
type Execution struct {
	s     *Supervisor
	it    *item // nil for a foreground call
	scope Owner
}

// ExecutionFrom returns the Execution of the child whose context ctx is (or
// derives from), and whether there is one.
func ExecutionFrom(ctx context.Context) (*Execution, bool) {
	e, ok := ctx.Value(execKey{}).(*Execution)
	return e, ok
}

// WorkID returns the Work's id, or "" for a foreground call.
func (e *Execution) WorkID() string {
	if e.it == nil {
		return ""
	}
	return e.it.ref.ID
}

// Scope returns the child's own owner scope, one level deeper than its
// owner: background Work the child starts belongs to it, and is cancelled
// and forgotten when the child ends.
func (e *Execution) Scope() Owner { return e.scope }

// Guidance drains the child's mailbox: it returns the guidance accepted
// since the last call, in order, and the engine keeps no copy. A child calls
// it at each model-request boundary. It returns nil for a foreground call
// and when there is none.
func (e *Execution) Guidance() []string {
	if e.it == nil {
		return nil
	}
	var em emission
	e.s.mu.Lock()
	msgs := e.it.guidance
	e.it.guidance = nil
	if len(msgs) > 0 {
		em.add(e.it, Event{Type: EventGuidanceDelivered, Time: e.s.cfg.clock.Now(), Count: len(msgs)})
	}
	e.s.unlockAndEmit(&em)
	return msgs
}

// Call runs a child in the foreground, on the calling goroutine, and returns
// its exact output. The child gets a fresh context that carries only what
// the Observer binds and its Execution (no value of ctx), is cancelled when
// ctx is, and is bounded by spec.MaxDuration (or the Supervisor's default).
// Its own scope is released when it returns. The output size is not
// limited.
//
// A child that panics, fails or overruns its deadline yields ErrChildFailed
// with Class set; when ctx ends first and the child returns an error it
// yields ErrCancelled (a child that still returns its output wins). Bad specs,
// a closed Supervisor, an ended scope and the depth limit fail as for Start.
// Close cancels a foreground call in progress (it then yields ErrClosed
// unless the child still returns its output) and waits for it.
func (s *Supervisor) Call(ctx context.Context, spec Spec) (string, error) {
	if err := validOwner(spec.Owner); err != nil {
		return "", err
	}
	if err := validTarget(spec.Target); err != nil {
		return "", err
	}
	if spec.Run == nil {
		return "", errorf(ErrInvalidSpec, "run function is nil")
	}
	ev := Event{Type: EventForeground, Owner: spec.Owner.id, Depth: spec.Owner.depth,
		Target: spec.Target.Label, Kind: spec.Target.Kind, Time: s.cfg.clock.Now()}
	exec, cancel := context.WithCancelCause(s.cfg.observer.Bind(ctx, context.Background(), ev))
	defer cancel(nil)
	// Admission and registration happen together, so Close either refuses
	// this call or cancels it and waits for it.
	s.mu.Lock()
	reason := ""
	switch {
	case s.closed, s.draining && spec.Owner.end == nil:
		// Shutdown refuses new top-level calls; a running child's calls
		// are part of the Work it drains.
		reason = "closed"
	case spec.Owner.end != nil && spec.Owner.end.ended:
		reason = reasonScopeEnded
	case spec.Owner.depth >= s.cfg.maxDepth:
		reason = LimitDepth
	}
	if reason != "" {
		s.mu.Unlock()
		return "", s.refusal(reason)
	}
	fg := &foreground{cancel: cancel, target: spec.Target.Label, done: make(chan struct{})}
	s.foreground[fg] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.foreground, fg)
		close(fg.done)
		s.mu.Unlock()
		s.wg.Done()
	}()
	stopParent := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	defer stopParent()
	if d := positiveOr(spec.MaxDuration, s.cfg.maxDuration); d > 0 {
		stop := s.cfg.clock.AfterFunc(d, func() { cancel(errDeadline) })
		defer stop()
	}
	scope := Owner{id: spec.Owner.id + "/" + newID(), depth: spec.Owner.depth + 1, end: &scopeEnd{}}
	defer func() {
		s.mu.Lock()
		scope.end.ended = true
		s.mu.Unlock()
		s.Release(scope)
	}()
	exec = context.WithValue(exec, execKey{}, &Execution{s: s, scope: scope})
	out, err, panicked := invoke(exec, spec.Run)
	switch {
	case panicked:
		return "", childFailed(ClassPanic)
	case errors.Is(context.Cause(exec), errDeadline):
		return "", childFailed(ClassDeadline)
	case err != nil && errors.Is(context.Cause(exec), errClosed):
		return "", ErrClosed
	case err == nil:
		return out, nil // completion wins over a late cancellation
	case ctx.Err() != nil:
		return "", ErrCancelled
	}
	return "", childFailed(ClassError)
}

// positiveOr returns v when it is positive (a Spec's override), else def
// (the Supervisor's default).
func positiveOr[T int | time.Duration](v, def T) T {
	if v > 0 {
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
