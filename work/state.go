package work

import (
	"github.com/agentwork/agentwork/work/observe"
)

// The six lifecycle states of a Work (observe.State: the events and the
// deployment view speak them too). Their string form is the exact
// model-facing value; observe.States lists them in lifecycle order.
const (
	StateQueued          = observe.StateQueued
	StateRunning         = observe.StateRunning
	StateCompleted       = observe.StateCompleted
	StateFailed          = observe.StateFailed
	StateCancelRequested = observe.StateCancelRequested
	StateCancelled       = observe.StateCancelled
)

// stateEdges[i][j] is canTransition(observe.States[i], observe.States[j]), and
// stateTerminal[i] observe.States[i].Terminal(): the same rules, by index.
var stateEdges, stateTerminal = func() (edges [len(observe.States)][len(observe.States)]bool, terminal [len(observe.States)]bool) {
	for i, from := range observe.States {
		terminal[i] = from.Terminal()
		for j, to := range observe.States {
			edges[i][j] = canTransition(from, to)
		}
	}
	return edges, terminal
}()

// canTransition reports whether from -> to is a legal lifecycle edge. It is
// the only table the in-process engine consults; no other edge can occur.
func canTransition(from, to observe.State) bool {
	switch from {
	case StateQueued:
		return to == StateRunning || to == StateCancelled
	case StateRunning:
		return to == StateCompleted || to == StateFailed || to == StateCancelRequested
	case StateCancelRequested:
		return to == StateCompleted || to == StateFailed || to == StateCancelled
	}
	return false
}

// The two kinds of target (observe.Kind).
const (
	// KindAgent is a child agent: it can take guidance through Send.
	KindAgent = observe.KindAgent
	// KindFunction is a plain function child: Send is refused.
	KindFunction = observe.KindFunction
)

// Error classes: the only failure information the engine keeps.
const (
	ClassError          = "error"             // the child returned an error
	ClassPanic          = "panic"             // the child panicked
	ClassDeadline       = "deadline_exceeded" // the per-work maximum duration passed
	ClassResultTooLarge = "result_too_large"  // the output exceeded the maximum result bytes
	// ClassCancelled is the class of cancelled Work (Status.Class and the
	// ErrorClass of observe.EventCancelled), not a failure.
	ClassCancelled = "cancelled"
	// ClassOrphaned is the ErrorClass of observe.EventOrphaned: Shutdown abandoned
	// the Work, whose child had not returned.
	ClassOrphaned = "orphaned"
)
