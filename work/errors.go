package work

import "fmt"

// Error is every error the engines (the in-process engine and the others)
// return. Code is stable and machine-readable; the message never contains
// child output, failure text, guidance text or any other caller-supplied
// content.
type Error struct {
	Code  string
	Class string // for ErrChildFailed: the failure class (a Class constant)
	msg   string
	cause error
}

func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	return e.msg
}

// Unwrap returns the cause of an error made by Wrap (ErrUnavailable's
// transport or server error), or nil.
func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.cause
}

// wrap returns an error with e's code, class and message whose cause
// (Unwrap) is cause; the message does not include the cause's.
func (e *Error) wrap(cause error) *Error {
	if e == nil {
		return &Error{cause: cause}
	}
	return &Error{Code: e.Code, Class: e.Class, msg: e.msg, cause: cause}
}

// Is matches any *Error with the same Code, so errors.Is(err, ErrNotFound)
// works for wrapped and detailed errors alike.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && e != nil && t != nil && t.Code == e.Code
}

func newError(code, msg string) *Error {
	e := &Error{Code: code, msg: msg}
	if errorCodes[code] == nil {
		errorCodes[code] = e
	} else {
		errorVariants = append(errorVariants, e)
	}
	return e
}

func errorf(base *Error, format string, args ...any) *Error {
	return &Error{Code: base.Code, msg: base.msg + ": " + fmt.Sprintf(format, args...)}
}

// The errors of the engine, by Code.
var (
	// ErrNotFound: the id is unknown, belongs to another owner, or was
	// detached. The three cases are indistinguishable on purpose.
	ErrNotFound = newError("not_found", "work not found")
	// ErrInvalidOwner: the owner is the zero Owner, or a top-level owner
	// whose id contains "/".
	ErrInvalidOwner = newError("invalid_owner", "invalid owner")
	// ErrInvalidSpec: a Spec has no Run function, an empty target label or
	// an unknown target kind.
	ErrInvalidSpec = newError("invalid_spec", "invalid work spec")
	// ErrInvalidTimeout: a negative timeout.
	ErrInvalidTimeout = newError("invalid_timeout", "timeout must not be negative")
	// ErrEmptyMessage: guidance with no text.
	ErrEmptyMessage = newError("empty_message", "guidance message must be non-empty")
	// ErrNotAgent: guidance sent to a function child.
	ErrNotAgent = newError("not_agent", "guidance is accepted only by agent children")
	// ErrTerminal: guidance sent to terminal work.
	ErrTerminal = newError("terminal", "work is already terminal")
	// ErrMessageTooLarge: guidance larger than the per-message limit.
	ErrMessageTooLarge = newError("message_too_large", "guidance message is too large")
	// ErrMailboxFull: guidance that would take the Work's undelivered
	// guidance over its count or byte limit.
	ErrMailboxFull = newError("mailbox_full", "too much undelivered guidance for this work")
	// ErrConflict: a command identity reused with different content.
	ErrConflict = newError("conflict", "command id was already used with a different message")
	// ErrLimit: a start refused by a limit; the message names the limit.
	ErrLimit = newError("limit_exceeded", "limit exceeded")
	// ErrClosed: the engine is closed and admits no more work.
	ErrClosed = newError("closed", "engine is closed")
	// ErrCloseFromChild: Close or Shutdown called with the context of a
	// child of the same in-process engine, or one derived from it (it would
	// wait for that child itself).
	ErrCloseFromChild = newError("close_from_child", "a child cannot close its own engine")
	// ErrScopeEnded: work started in a child's scope after the child
	// returned (for example by a goroutine the child leaked).
	ErrScopeEnded = newError("scope_ended", "the child that owns this scope has ended")
	// ErrChildFailed: a foreground child failed; Class says how.
	ErrChildFailed = newError("child_failed", "child failed")
	// ErrCancelled: a foreground call's context ended before the child
	// returned.
	ErrCancelled = newError("cancelled", "call cancelled")
)

// callError is work/boundary's CallError (which documents it).
func callError(st Status) error {
	switch st.State {
	case StateFailed:
		if st.Class == "" {
			return childFailed(ClassError)
		}
		return childFailed(st.Class)
	case StateCancelled:
		return ErrCancelled
	}
	return nil
}

func childFailed(class string) *Error {
	return &Error{Code: ErrChildFailed.Code, Class: class, msg: "child failed (class " + class + ")"}
}

// reasonScopeEnded is the refusal reason of a start in a child's scope
// that has ended (observe.EventRefused's ErrorClass).
const reasonScopeEnded = "scope_ended"

// ErrNotInitialized: an Engine made by neither work.New nor a runner (its
// zero value, var s work.Engine or &work.Engine{}, or a nil *Engine).
// Every method of such an Engine that returns an error returns it, every
// time, and so do work/boundary's Rows, Settled and Live of it (its
// Observer is observe.NopObserver{}, its Now the zero time).
var ErrNotInitialized = newError("uninitialized", "engine is not initialized: create it with work.New or a runner")

// ErrInvalidBudget: a Budget with a negative field, in Spec.Budget (Start,
// Call), in SetPool, or in WithDefaultBudget (other than -1, which means no
// limit there) or WithBudgetCeiling. The message names the field. An
// option cannot fail, so the Engine records the problem and every
// Start, Call and SetPool returns it.
var ErrInvalidBudget = newError("invalid_budget", "invalid budget")

// ErrInvalidLimit: a limit option with a negative value (WithMaxRunning,
// WithMaxOutstanding, WithMaxStarts, WithMaxDepth, WithMaxResultBytes,
// WithRetention and the guidance bounds, and the durable runners' options
// of the same names). The message names the option. An option cannot
// fail, so the Engine records the problem and every Start, Call and
// SetPool returns it.
var ErrInvalidLimit = newError("invalid_limit", "invalid limit")
