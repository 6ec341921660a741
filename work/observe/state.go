package observe

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
func (s State) Valid() bool { return s.Index() >= 0 }

// Index returns s's index in States, -1 when s is not a state. The six
// names differ in length but for two pairs: one comparison finds most.
func (s State) Index() int {
	switch len(s) {
	case len(StateQueued): // and StateFailed
		switch s {
		case StateQueued:
			return 0
		case StateFailed:
			return 4
		}
	case len(StateRunning):
		if s == StateRunning {
			return 1
		}
	case len(StateCancelRequested):
		if s == StateCancelRequested {
			return 2
		}
	case len(StateCompleted): // and StateCancelled
		switch s {
		case StateCompleted:
			return 3
		case StateCancelled:
			return 5
		}
	}
	return -1
}

// Kind says what a target is.
type Kind uint8

const (
	// KindAgent is a child agent: it can take guidance through Send.
	KindAgent Kind = iota + 1
	// KindFunction is a plain function child: Send is refused.
	KindFunction
)

// String returns "agent", "function" or "unknown".
func (k Kind) String() string {
	switch k {
	case KindAgent:
		return "agent"
	case KindFunction:
		return "function"
	}
	return "unknown"
}
