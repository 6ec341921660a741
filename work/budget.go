package work

import (
	"fmt"
	"time"

	"github.com/agentwork/agentwork/work/internal/contract"
)

// Budget bounds one child run: how many model requests (turns) and tool
// calls it may make, how many tokens (input + output, as the provider
// reports them) it may spend, and how long it may run. A zero field means
// "inherit": the engine's default (WithDefaultBudget); inside a pool or
// a parent child's reservation, an agent child reserves that default
// capped at its share (a quarter of the pool, rounded up) and at what
// remains, and a function
// child reserves nothing (see SetPool). The
// engine's ceiling (WithBudgetCeiling) clamps every field: a child can
// lower it, never raise it. No field may be negative (ErrInvalidBudget from
// Start, Call and SetPool), except -1 in WithDefaultBudget, meaning no limit.
//
// Turns, tool calls and tokens are enforced by the child's agent adapter at
// its model-request boundary (the langchaingo adapter does it): when one
// runs out the child gets one final request with no tools and an
// instruction to answer now, and that answer is the Work's output (a
// partial result). MaxDuration is the child's deadline: reaching it fails
// the Work with class deadline_exceeded (an external job's too: past it
// no poll starts and a poll's answer that arrives after it decides
// nothing).
//
// As a pool (WithPool of the adapter, Engine.SetPool) a Budget is the
// total its owner's children may reserve; MaxDuration is ignored there.
type Budget struct {
	MaxTurns     int           // model requests, the final one not counted
	MaxToolCalls int           // tool calls the child's agent makes
	MaxTokens    int64         // input + output tokens, as reported by the provider
	MaxDuration  time.Duration // from running; the child's deadline
}

// ClassBudgetExhausted is the failure class of a child whose budget ran out
// when it was started to fail on exhaustion (Spec.FailOnBudget), or that
// kept asking for model requests after its final one.
const ClassBudgetExhausted = "budget_exhausted"

// ErrBudgetExhausted: a start (or a foreground call) that its owner's pool,
// or its parent child's reservation, cannot cover; nothing was started. A
// child's model boundary also returns it when the child may make no more
// requests.
var ErrBudgetExhausted = newError("budget_exhausted", "budget exhausted")

// The dimensions a pool and a reservation account for.
const (
	dimTurns     = contract.DimTurns
	dimToolCalls = contract.DimToolCalls
	dimTokens    = contract.DimTokens
	numDims      = 3
)

// budgetConfig is an engine's budget configuration: the defaults of a
// child that sets none (def, whose MaxDuration is the per-Work deadline;
// WithDefaultBudget) and the ceiling (WithBudgetCeiling).
type budgetConfig struct {
	def, ceiling Budget
	// defDims and ceilDims are def's and ceiling's pooled dimensions, in
	// the order of dims, set with them (newConfig).
	defDims, ceilDims [numDims]int64
}

// Default budgets: a child that sets none gets these (an engine's
// WithDefaultBudget replaces them). Tokens have no default limit, as not
// every provider reports usage.
const (
	defaultMaxTurns     = 50
	defaultMaxToolCalls = 100
)

// WithDefaultBudget sets the budget of a child that leaves a field zero
// (default: 50 turns, 100 tool calls, no token limit, and a 30-minute
// MaxDuration). A zero field keeps the current default; -1 means "no
// limit" for that field (no deadline for MaxDuration). Its MaxDuration is
// the one way to set the engine's per-Work deadline, counted from
// running: reaching it cancels the child's context and the Work fails with
// class deadline_exceeded; a child's own Budget.MaxDuration can only lower
// it. Any other negative
// value is invalid: the option then changes nothing, and every Start, Call
// and SetPool of the Engine fails with ErrInvalidBudget naming the
// field (New cannot fail).
func WithDefaultBudget(b Budget) Option {
	return optionFunc(func(c *config) {
		if err := checkBudget("WithDefaultBudget", b, true); err != nil {
			c.recordErr(err)
			return
		}
		d := c.budget.def.dims()
		for i, v := range b.dims() {
			if v != 0 {
				d[i] = max(v, 0)
			}
		}
		c.budget.def.setDims(d)
		if b.MaxDuration != 0 {
			c.budget.def.MaxDuration = max(b.MaxDuration, 0)
		}
	})
}

// WithBudgetCeiling sets the most any child may have (default: none): a
// child's larger or absent (unlimited) value becomes the ceiling's. Zero
// fields set no ceiling. MaxDuration clamps per-child durations too. A
// negative field is invalid: the option then changes nothing, and every
// Start, Call and SetPool of the Engine fails with ErrInvalidBudget
// naming the field (New cannot fail).
func WithBudgetCeiling(b Budget) Option {
	return optionFunc(func(c *config) {
		if err := checkBudget("WithBudgetCeiling", b, false); err != nil {
			c.recordErr(err)
			return
		}
		d := b.dims()
		for i := range d {
			d[i] = max(d[i], 0)
		}
		c.budget.ceiling.setDims(d)
		c.budget.ceiling.MaxDuration = max(b.MaxDuration, 0)
	})
}

// resolveDim returns one dimension of a child's budget before any pool:
// its own limit want, else the default def, clamped to the ceiling ceil.
func resolveDim(want, def, ceil int64) int64 {
	v := want
	if v <= 0 {
		v = def
	}
	if ceil > 0 && (v <= 0 || v > ceil) {
		v = ceil
	}
	return v
}

// dims resolves the pooled dimensions of a child whose own limits are
// want, in the order of dims, before any pool: resolveDim with the
// defaults and the ceiling.
func (b *budgetConfig) dims(want [numDims]int64) [numDims]int64 {
	var eff [numDims]int64
	for i := range eff {
		eff[i] = resolveDim(want[i], b.defDims[i], b.ceilDims[i])
	}
	return eff
}

func defaultBudgetConfig() budgetConfig {
	return budgetConfig{def: Budget{MaxTurns: defaultMaxTurns, MaxToolCalls: defaultMaxToolCalls,
		MaxDuration: defaultMaxDuration}}
}

// duration resolves a child's deadline: its own (Budget.MaxDuration),
// else the engine's default (WithDefaultBudget),
// clamped to the ceiling: WithBudgetCeiling's MaxDuration when set, else
// the engine's default itself, so a child can lower but never raise it.
func (b *budgetConfig) duration(spec *Spec) time.Duration {
	d := spec.Budget.MaxDuration
	ceil := b.ceiling.MaxDuration
	if ceil <= 0 {
		return contract.Clamp(d, b.def.MaxDuration)
	}
	if d <= 0 {
		d = b.def.MaxDuration
	}
	if d <= 0 || d > ceil {
		d = ceil
	}
	return d
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
