package driver

import (
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/internal/seam"
)

// DecodeError returns the error an engine reported as code and message
// (a *work.Error's Code and Error(), carried across a process boundary):
// package work's error with that Code (any of them, work.ErrNotFound to
// work.ErrUnavailable), with message kept when message is that error's,
// with a detail (Detail), or another message work gives that
// code. The message must be one a *work.Error produced: it is not checked
// for caller content. A message longer than 1 KiB is not read: the error
// is that code's base error. false for an unknown code.
func DecodeError(code, message string) (*work.Error, bool) {
	e, ok := seam.DecodeError(code, message)
	if !ok {
		return nil, false
	}
	return e.(*work.Error), true
}

// UpdateRefusal returns the work.ErrUpdateRefused of reason (a
// work.UpdateRefused* constant; Class is reason, which DecodeError
// restores from the message), for an engine that reports a refusal its
// UpdateLog decided.
func UpdateRefusal(reason string) *work.Error { return seam.UpdateRefusal(reason).(*work.Error) }

// Detail returns an error with e's code and class whose message is e's
// followed by detail (DecodeError restores it across a process
// boundary). detail must hold no caller-supplied content.
func Detail(e *work.Error, detail string) *work.Error { return seam.Detail(e, detail).(*work.Error) }

// Wrap returns an error with e's code, class and message whose cause
// (errors.Unwrap) is cause; the message does not include the cause's.
// An engine reports a transport or server failure as
// Wrap(work.ErrUnavailable, cause).
func Wrap(e *work.Error, cause error) *work.Error { return seam.Wrap(e, cause).(*work.Error) }

// ValidateOwner returns work.ErrInvalidOwner for the zero Owner, the
// approver role (work.Approver, which only reads and answers approvals)
// or a top-level owner whose id contains "/", and nil for any other
// Owner: what every engine refuses first.
func ValidateOwner(o work.Owner) error { return seam.ValidateOwner(o) }
