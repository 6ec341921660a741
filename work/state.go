package work

// State is a Work's lifecycle state. Its string form is the exact
// model-facing value.
type State string

// The six lifecycle states.
const (
	StateQueued          State = "queued"
	StateRunning         State = "running"
	StateCompleted       State = "completed"
	StateFailed          State = "failed"
	StateCancelRequested State = "cancel-requested"
	StateCancelled       State = "cancelled"
)

// States lists every state in lifecycle order.
var States = [...]State{StateQueued, StateRunning, StateCancelRequested, StateCompleted, StateFailed, StateCancelled}

// Terminal reports whether s is final: completed, failed or cancelled.
func (s State) Terminal() bool {
	return s == StateCompleted || s == StateFailed || s == StateCancelled
}

// Valid reports whether s is one of the six states.
func (s State) Valid() bool { return s.index() >= 0 }

func (s State) index() int {
	for i, v := range States {
		if v == s {
			return i
		}
	}
	return -1
}

// CanTransition reports whether from -> to is a legal lifecycle edge. It is
// the only table the Supervisor consults; no other edge can occur.
func CanTransition(from, to State) bool {
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

// Kind says what a target is.
type Kind uint8

const (
	// KindAgent is a child agent: it can take guidance through Send.
	KindAgent Kind = iota + 1
	// KindFunction is a plain function child: Send is refused.
	KindFunction
)

func (k Kind) String() string {
	switch k {
	case KindAgent:
		return "agent"
	case KindFunction:
		return "function"
	}
	return "unknown"
}

// Error classes: the only failure information the engine keeps.
const (
	ClassError          = "error"             // the child returned an error
	ClassPanic          = "panic"             // the child panicked
	ClassDeadline       = "deadline_exceeded" // the per-work maximum duration passed
	ClassResultTooLarge = "result_too_large"  // the output exceeded the maximum result bytes
)
