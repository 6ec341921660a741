package work

import (
	"fmt"
	"time"
)

// ErrNotInitialized: a Supervisor that was not made by New (its zero
// value, var s work.Supervisor or &work.Supervisor{}). Every method of such
// a Supervisor that returns an error returns it, every time; the others
// return zero values (Observer returns observe.NopObserver{}, Now the zero time).
var ErrNotInitialized = newError("uninitialized", "supervisor is not initialized: create it with work.New")

// ErrInvalidBudget: a Budget with a negative field, in Spec.Budget (Start,
// Call), in SetPool, or in WithDefaultBudget (other than -1, which means no
// limit there) or WithBudgetCeiling. The message names the field. An
// option cannot fail, so the Supervisor records the problem and every
// Start, Call and SetPool returns it.
var ErrInvalidBudget = newError("invalid_budget", "invalid budget")

// ErrInvalidLimit: a limit option with a negative value (WithMaxRunning,
// WithMaxOutstanding, WithMaxStarts, WithMaxDepth, WithMaxResultBytes,
// WithRetention and the guidance bounds, and the durable runners' options
// of the same names). The message names the option. An option cannot
// fail, so the Engine records the problem and every Start, Call and
// SetPool returns it.
var ErrInvalidLimit = newError("invalid_limit", "invalid limit")

// uninitialized reports whether s is a zero Supervisor (New makes idle).
func (s *Supervisor) uninitialized() bool { return s.idle == nil }

// admissible checks what precedes every Start and Call: that s was made
// by New with a valid configuration and that spec is valid (Spec.Validate).
func (s *Supervisor) admissible(spec *Spec) error {
	if s.idle == nil {
		return ErrNotInitialized
	}
	if s.cfg.err != nil {
		return s.cfg.err
	}
	return spec.Validate()
}

// poolable is admissible for SetPool.
func (s *Supervisor) poolable(b Budget) error {
	if s.idle == nil {
		return ErrNotInitialized
	}
	if s.cfg.err != nil {
		return s.cfg.err
	}
	return checkBudget("SetPool", b, false) // Budget.Validate, naming SetPool
}

// checkBudget refuses a negative field of b, which where names; with
// unlimited, -1 is allowed (it means no limit). Without unlimited it is
// Budget.Validate with where in the message.
func checkBudget(where string, b Budget, unlimited bool) error {
	name, v, ok := budgetFault(b, unlimited)
	if ok {
		return nil
	}
	if where != "" {
		where += ": "
	}
	if unlimited {
		return errorf(ErrInvalidBudget, "%s%s is %s (-1 means no limit, 0 keeps the default; other negative values are invalid)", where, name, v)
	}
	return errorf(ErrInvalidBudget, "%s%s is %s (must not be negative; 0 means inherit or none)", where, name, v)
}

// budgetFault returns the first negative field of b (with unlimited, other
// than -1) by name and value; ok when there is none.
func budgetFault(b Budget, unlimited bool) (name, value string, ok bool) {
	if b.MaxTurns >= 0 && b.MaxToolCalls >= 0 && b.MaxTokens >= 0 && b.MaxDuration >= 0 {
		return "", "", true
	}
	for _, f := range [...]struct {
		name string
		v    int64
	}{{"MaxTurns", int64(b.MaxTurns)}, {"MaxToolCalls", int64(b.MaxToolCalls)},
		{"MaxTokens", b.MaxTokens}, {"MaxDuration", int64(b.MaxDuration)}} {
		if f.v >= 0 || (unlimited && f.v == -1) {
			continue
		}
		v := fmt.Sprint(f.v)
		if f.name == "MaxDuration" {
			v = time.Duration(f.v).String()
		}
		return f.name, v, false
	}
	return "", "", true
}

// recordErr keeps the first configuration problem an option found.
func (c *config) recordErr(err error) {
	if err != nil && c.err == nil {
		c.err = err
	}
}
