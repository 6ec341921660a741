package work

import (
	"context"
	"time"
)

type execKey struct{}

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
