package work

import (
	"context"

	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/observe"
)

type execKey struct{}

// Execution is a running child's handle on its own Work, found in the
// child's context with ExecutionFrom. Its methods are safe for concurrent
// use. A nil or zero *Execution (what ExecutionFrom returns outside a
// child) behaves as outside a child run: no Work id, the zero scope, no
// budget, and nothing is counted.
type Execution struct {
	rt childRuntime // what runs the child; nil for the zero Execution
}

// childRuntime is the engine's half of an Execution: what runs the child
// answers for it. A background Work of the in-process engine (its item), a
// foreground call (Engine.Call) and a run of another Engine
// (work/driver's WithRemote) implement it. Its methods are safe for concurrent use.
type childRuntime interface {
	// workID returns the Work's id, "" for a foreground call.
	workID() string
	// ownScope returns the child's own owner scope.
	ownScope() Owner
	// budgetRun returns the child's budget state.
	budgetRun() *run
	// progressCounts returns the Work's progress counts, nil when none
	// are kept (a foreground call).
	progressCounts() *progress
	// progressed reports that the progress counts changed: an
	// observe.EventProgress when the last one is at least
	// progressInterval old. It never blocks.
	progressed()
	// runEvent delivers a budget event of the child's run.
	runEvent(ev observe.Event)
	// guidance drains the child's guidance (boundary.Guidance).
	guidance() []string
	// reportUpdate decides on an update the child reports
	// (ReportUpdate).
	reportUpdate(key string, value []byte, question bool) (UpdateReceipt, error)
	// awaitQuestion is the question wait of work/boundary's BeginRequest.
	awaitQuestion()
	// awaitSlot is the running-slot wait of work/boundary's BeginRequest.
	awaitSlot()
	// awaitAnswer waits for the answer to the child's question
	// (AwaitAnswer).
	awaitAnswer(ctx context.Context) ([]string, error)
	// takeUnanswered returns the questions whose wait ended without an
	// answer since the last call, and forgets them (boundary.Unanswered).
	takeUnanswered() []int
}

// scope returns the child's own owner scope (the zero Owner for the zero
// Execution).
func (e *Execution) scope() Owner {
	if e.rt == nil {
		return Owner{}
	}
	return e.rt.ownScope()
}

// run returns the child's budget state, nil outside a child run.
func (e *Execution) run() *run {
	if e.rt == nil {
		return nil
	}
	return e.rt.budgetRun()
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
	if e.rt == nil {
		return ""
	}
	return e.rt.workID()
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
// override specMax clamped to the engine's def (0: none).
func tooLarge(out string, specMax, def int) bool {
	limit := contract.ResultBytes(specMax, def)
	return limit > 0 && len(out) > limit
}
