package work

import (
	"strings"

	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/internal/seam"
)

// This file is the contract logic every Engine needs, written once: the
// in-process engine uses it and so must any other engine (see "For engine
// implementations" in docs/engine.md). An engine that copies
// any of it is a defect.

// validOwner returns ErrInvalidOwner for the zero Owner, the approver
// role or a top-level owner whose id contains "/", and nil for any other
// Owner: what every engine refuses (work/driver's ValidateOwner, through
// package seam).
func validOwner(o Owner) error {
	if o.IsZero() {
		return ErrInvalidOwner
	}
	if o.IsApprover() {
		return errorf(ErrInvalidOwner, "the approver role only reads and answers approvals")
	}
	if o.slash {
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
func (s Spec) Validate() error { return s.validate() }

// validate is Validate without the Spec's copy (every Start and Call).
func (s *Spec) validate() error {
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

// dims returns b's pooled dimensions in the order of every pool and
// reservation (contract.Dims). MaxDuration is not pooled.
func (b Budget) dims() [numDims]int64 { return contract.Dims(b.MaxTurns, b.MaxToolCalls, b.MaxTokens) }

// setDims sets b's pooled dimensions from d, in the order of dims.
func (b *Budget) setDims(d [numDims]int64) {
	b.MaxTurns, b.MaxToolCalls, b.MaxTokens = contract.FromDims(d)
}

// ErrUnavailable: the engine could not reach what keeps the Work (its
// server or transport failed, or answered with an error the contract does
// not name). errors.Unwrap (and errors.Is, errors.As) reach the cause.
var ErrUnavailable = newError("unavailable", "engine unavailable")

// work/driver decodes an engine's errors (DecodeError) and builds an
// update's refusal (UpdateRefusal) with this package's own.
func init() {
	seam.DecodeError = func(code, message string) (error, bool) {
		if e, ok := decodeError(code, message); ok {
			return e, true
		}
		return nil, false
	}
	seam.UpdateRefusal = func(reason string) error { return updateRefusal(reason) }
	seam.CallError = func(st any) error {
		s, _ := st.(Status)
		return callError(s)
	}
	seam.ValidateOwner = func(o any) error {
		ow, _ := o.(Owner)
		return validOwner(ow)
	}
	seam.Detail = func(e any, detail string) any { err, _ := e.(*Error); return err.detail(detail) }
	seam.Wrap = func(e any, cause error) any { err, _ := e.(*Error); return err.wrap(cause) }
}

// decodeError is work/driver's DecodeError (which documents it).
func decodeError(code, message string) (*Error, bool) {
	base, ok := errorCodes[code]
	if !ok {
		return nil, false
	}
	if message == base.msg || len(message) > maxErrorMessage {
		return base, true
	}
	if d, ok := strings.CutPrefix(message, base.msg+": "); ok {
		return base.detail(d), true
	}
	for _, v := range errorVariants {
		if v.Code == code && v.msg == message {
			return v, true
		}
	}
	return base, true
}

// maxErrorMessage is the longest error message decodeError reads (the
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
