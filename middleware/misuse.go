package middleware

import (
	"errors"
	"fmt"

	"github.com/agentwork/agentwork/work"
)

// Preparation errors. Prepare's errors wrap exactly one of them (with the
// entry's label in the message where there is one): test with errors.Is.
// An engine that refuses the owner (a closed engine: work.ErrClosed) is
// reported wrapped as the engine returned it.
var (
	// ErrNilEngine: Prepare got a nil engine (or a typed nil pointer of
	// any engine type, such as a nil *work.Engine).
	ErrNilEngine = errors.New("middleware: nil engine")
	// ErrEngineNotReady: the engine is not usable: it refuses the owner
	// with work.ErrNotInitialized (a zero work.Engine: build one with
	// work.New). Prepare's error then satisfies errors.Is for both.
	ErrEngineNotReady = errors.New("middleware: the engine is not ready (a zero *work.Engine? build one with work.New)")
	// ErrNilContext: PrepareContext got a nil ctx.
	ErrNilContext = errors.New("middleware: nil context (pass context.Background() or the request's context)")
	// ErrZeroOwner: Prepare got the zero work.Owner.
	ErrZeroOwner = errors.New("middleware: zero Owner")
	// ErrInvalidEntry: an entry is empty, nil, of an unsupported type, a
	// Tool whose Name differs from its label, or a zero BackgroundChild.
	ErrInvalidEntry = errors.New("middleware: invalid entry")
	// ErrWorkToolName: a tool (authored, or named in extra) is named "work"
	// in any case while the work tool is added.
	ErrWorkToolName = errors.New(`middleware: a tool collides with the automatic "work" tool`)
	// ErrInvalidChild: a child has no Run or an unknown Kind.
	ErrInvalidChild = errors.New("middleware: invalid child")
	// ErrInvalidSchema: a child's input schema is not JSON-encodable, not
	// an object schema, or declares run_in_background.
	ErrInvalidSchema = errors.New("middleware: invalid child input schema")
	// ErrInvalidChildName: a child's label is not a tool name the
	// providers accept (OpenAI and Anthropic: ^[a-zA-Z0-9_-]{1,64}$).
	ErrInvalidChildName = errors.New("middleware: invalid child name")
	// ErrNegativeBudget: a work.Budget with a negative field (the error
	// also satisfies errors.Is for work.ErrInvalidBudget).
	ErrNegativeBudget = errors.New("middleware: negative budget")
	// ErrNegativeLimit: a child's MaxInputBytes is negative.
	ErrNegativeLimit = errors.New("middleware: negative limit")
	// ErrInvalidBackgroundOption: a child's AutoBackground bound, or
	// WithAutoBackground's, is zero or negative, or a child that is not
	// backgroundable has AutoBackground or BackgroundByDefault (there
	// would be no work tool to follow its ref).
	ErrInvalidBackgroundOption = errors.New("middleware: invalid background option")
	// ErrNotPrepared: a method of a Kit that Prepare did not make (the zero
	// Kit).
	ErrNotPrepared = errors.New("middleware: the Kit was not made by Prepare")
	// ErrReleased: RunUntilSettled of a Kit after its Release.
	ErrReleased = errors.New("middleware: the Kit was released")
	// ErrNilRun: RunUntilSettled got a nil run function.
	ErrNilRun = errors.New("middleware: RunUntilSettled: nil run function")
)

// prepError is a preparation error: its own message, and the sentinel it
// is an instance of.
type prepError struct {
	msg  string
	kind error
}

func (e *prepError) Error() string { return e.msg }
func (e *prepError) Unwrap() error { return e.kind }

// prepErr returns a preparation error of the given kind with the message
// format makes.
func prepErr(kind error, format string, args ...any) error {
	return &prepError{msg: fmt.Sprintf(format, args...), kind: kind}
}

// The error objects of misuse.
var (
	nilContext = errObj(CodeNilContext, "the tool was called with a nil context; this is a bug in the application, not in the input")
	released   = errObj(CodeReleased, "this agent's tools were released: it can start and list no more work")
)

// validChildName reports whether name is a tool name the providers accept:
// ^[a-zA-Z0-9_-]{1,64}$.
func validChildName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// CheckBudget returns work.Budget.Validate's error for b (a negative
// field, named), wrapped so that it satisfies errors.Is for both
// ErrNegativeBudget and work.ErrInvalidBudget; else nil. It is the check
// every engine makes, with the same message.
func CheckBudget(b work.Budget) error {
	if err := b.Validate(); err != nil {
		return &budgetError{err: err}
	}
	return nil
}

// budgetError is CheckBudget's error: work's, an ErrNegativeBudget too.
type budgetError struct{ err error }

func (e *budgetError) Error() string   { return "middleware: negative budget: " + e.err.Error() }
func (e *budgetError) Unwrap() []error { return []error{ErrNegativeBudget, e.err} }
