package work

import (
	"strings"

	"github.com/agentwork/agentwork/work/internal/contract"
)

// This file is the contract logic every Engine needs, written once: the
// Supervisor uses it and so must any other engine (see "For engine
// implementations" in docs/engine.md). An engine that copies
// any of it is a defect.

// ValidateOwner returns ErrInvalidOwner for the zero Owner or a top-level
// owner whose id contains "/", and nil for any other Owner.
func ValidateOwner(o Owner) error { return validOwner(o) }

func validOwner(o Owner) error {
	if o.IsZero() {
		return ErrInvalidOwner
	}
	if o.IsApprover() {
		return errorf(ErrInvalidOwner, "the approver role only reads and answers approvals")
	}
	if o.depth == 0 && strings.Contains(o.id, "/") {
		return errorf(ErrInvalidOwner, "a top-level owner id may not contain \"/\"")
	}
	return nil
}

// Validate checks what every engine refuses in a Spec before anything
// else, in this order: a negative Budget field (ErrInvalidBudget, naming
// the field), an invalid Owner (ErrInvalidOwner), an empty target label,
// an unknown target kind, a nil Run with no Job, an invalid Job (Submit
// or Await nil, a negative bound or backoff, Backoff.Initial over a set
// Backoff.Max, an agent target), a negative ApprovalTimeout or an
// Updates policy with a negative field or one over its ceiling
// (ErrInvalidSpec). It returns nil for a Spec an engine may admit.
func (s Spec) Validate() error {
	if err := checkBudget("Spec.Budget", s.Budget, false); err != nil {
		return err
	}
	if err := validOwner(s.Owner); err != nil {
		return err
	}
	if err := validTarget(s.Target); err != nil {
		return err
	}
	if s.Job != nil {
		if s.Target.Kind != KindFunction {
			return errorf(ErrInvalidSpec, "a job is a function target")
		}
		if err := s.Job.Validate(); err != nil {
			return err
		}
	} else if s.Run == nil {
		return errorf(ErrInvalidSpec, "run function is nil")
	}
	if s.ApprovalTimeout < 0 {
		return errorf(ErrInvalidSpec, "negative approval timeout")
	}
	if s.Updates != nil {
		return s.Updates.validate() // update_log.go
	}
	return nil
}

// Validate returns ErrInvalidSpec for a Job an engine cannot run: Submit
// or Await nil, a negative MaxPolls, MaxPollErrors or Backoff field, or a
// Backoff.Initial over a set Backoff.Max. A durable engine checks the Job
// its workers register with it.
func (j *Job) Validate() error {
	switch {
	case j == nil:
		return errorf(ErrInvalidSpec, "job is nil")
	case j.Submit == nil || j.Await == nil:
		return errorf(ErrInvalidSpec, "a job needs Submit and Await")
	case j.MaxPolls < 0 || j.MaxPollErrors < 0:
		return errorf(ErrInvalidSpec, "negative job bound")
	case j.Backoff.Initial < 0 || j.Backoff.Max < 0:
		return errorf(ErrInvalidSpec, "negative job backoff")
	case j.Backoff.Max > 0 && j.Backoff.Initial > j.Backoff.Max:
		return errorf(ErrInvalidSpec, "job backoff starts above its cap")
	}
	return nil
}

// Validate returns ErrInvalidBudget, naming the field, for a Budget with a
// negative field, and nil otherwise: what SetPool refuses in every engine
// (a Spec's Budget is checked by Spec.Validate).
func (b Budget) Validate() error { return checkBudget("", b, false) }

func validTarget(t Target) error {
	if t.Label == "" {
		return errorf(ErrInvalidSpec, "target label is empty")
	}
	if t.Kind != KindAgent && t.Kind != KindFunction {
		return errorf(ErrInvalidSpec, "unknown target kind %d", t.Kind)
	}
	return nil
}

// Dims returns b's pooled dimensions in the order turns, tool calls,
// tokens (BudgetTurns, BudgetToolCalls, BudgetTokens): the arrays
// PoolReserve and PoolCharge work on. MaxDuration is not pooled.
func (b Budget) Dims() [3]int64 {
	return [numDims]int64{int64(b.MaxTurns), int64(b.MaxToolCalls), b.MaxTokens}
}

// SetDims sets b's pooled dimensions from d, in the order of Dims.
func (b *Budget) SetDims(d [3]int64) {
	b.MaxTurns, b.MaxToolCalls, b.MaxTokens = int(d[dimTurns]), int(d[dimToolCalls]), d[dimTokens]
}

// usageDims returns what u spent in the order of Budget.Dims (tokens:
// input plus output).
func usageDims(u Usage) [numDims]int64 {
	return [numDims]int64{int64(u.Turns), int64(u.ToolCalls), u.Tokens()}
}

// PoolReserve resolves a start's budget against a pool, as SetPool
// documents, dimension by dimension in the order of Budget.Dims. limit is
// the pool's limits (0 or less: that dimension is not pooled), avail what
// remains of each (limit less reserved and spent, at least 0), want the
// child's own limits (Spec.Budget), eff its budget with the engine's
// defaults and ceiling applied, function whether it is a function child.
//
// In a pooled dimension a child that sets its own limit reserves it,
// refused when it does not fit; one that sets none reserves, if it is an
// agent, eff capped at 1/poolShare of the limit (rounded up; the share
// when eff is 0) and at what remains, refused when nothing remains; a
// function child that sets none reserves nothing and runs with no limit
// there (its own children reserve from the pool). Elsewhere the child runs
// with eff. PoolReserve returns the budget the child runs with and what it
// reserves, or the name of the first dimension that cannot be covered
// (BudgetTurns, BudgetToolCalls or BudgetTokens). It changes nothing and
// does not allocate.
func PoolReserve(limit, avail, want, eff [3]int64, function bool) (run, held [3]int64, short string) {
	for i := range run {
		v, explicit := eff[i], want[i] > 0
		if limit[i] <= 0 {
			run[i] = unpooled(v)
			continue
		}
		if !explicit && function {
			continue
		}
		a := max(avail[i], 0)
		share := (limit[i] + poolShare - 1) / poolShare
		switch {
		case a == 0 || (explicit && v > a):
			return run, held, dimNames[i]
		case !explicit && (v <= 0 || v > share):
			v = share
		}
		v = min(v, a)
		run[i], held[i] = v, v
	}
	return run, held, ""
}

// unpooled is the limit a child runs with in a dimension that is not
// pooled, from eff (its own limit, else the default, within the ceiling):
// eff, at least 0. It reserves nothing there.
func unpooled(eff int64) int64 { return max(eff, 0) }

// PoolCharge returns what a settled run is charged, in the order of
// Budget.Dims: what it spent, except that tokens are charged at least the
// run's token limit (limit, what it ran with) when any of its responses
// reported no usage (spent.UnknownUsage), since what those cost is
// unknown. The engine refunds the run's reservation and adds the charge to
// what was spent.
func PoolCharge(limit [3]int64, spent Usage) [3]int64 {
	return poolCharge(limit, usageDims(spent), spent.UnknownUsage > 0)
}

func poolCharge(limit, spent [3]int64, unknownUsage bool) [3]int64 {
	if unknownUsage && limit[dimTokens] > 0 {
		spent[dimTokens] = max(spent[dimTokens], limit[dimTokens])
	}
	return spent
}

// ErrUnavailable: the engine could not reach what keeps the Work (its
// server or transport failed, or answered with an error the contract does
// not name). errors.Unwrap (and errors.Is, errors.As) reach the cause.
var ErrUnavailable = newError("unavailable", "engine unavailable")

// DecodeError returns the error an engine reported as code and message
// (an *Error's Code and Error(), carried across a process boundary):
// the error of this package with that Code (any of them, ErrNotFound to
// ErrUnavailable), with message kept when message is that error's, with a
// detail (Detail), or another message this package gives that code. The
// message must be one a *Error produced: it is not checked for caller
// content. A message longer than 1 KiB is not read: the
// error is that code's base error. false for an unknown code.
func DecodeError(code, message string) (*Error, bool) {
	base, ok := errorCodes[code]
	if !ok {
		return nil, false
	}
	if message == base.msg || len(message) > maxErrorMessage {
		return base, true
	}
	if d, ok := strings.CutPrefix(message, base.msg+": "); ok {
		return base.Detail(d), true
	}
	for _, v := range errorVariants {
		if v.Code == code && v.msg == message {
			return v, true
		}
	}
	return base, true
}

// maxErrorMessage is the longest error message DecodeError reads (the
// package's own messages are far shorter): a longer one, however it came
// to be, is not carried into the decoded error.
const maxErrorMessage = 1024

// errorCodes are the package's errors by code, the first registered of
// each code (newError registers them as the package initializes).
var errorCodes = map[string]*Error{}

// errorVariants are errors with the code of another and a message of
// their own.
var errorVariants []*Error

var errLaunchConflict = newError(ErrConflict.Code, contract.LaunchConflict)

// poolShare is the divisor of an unbudgeted child's share of a pool: an
// agent child that sets no limit of its own in a pooled dimension reserves
// its default there, but at most 1/poolShare of the pool's limit (rounded
// up), and at most what remains; where it has no default (tokens), it
// reserves that share. So one child without a budget never takes a whole
// pool: with a pool of 20 turns and 200,000 tokens it reserves 5 turns and
// 50,000 tokens, and four such children fit. The same holds inside a
// parent child's reservation.
const poolShare = 4
