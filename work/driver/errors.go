package driver

import (
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/internal/seam"
)

// DecodeError returns the error an engine reported as code and message
// (a *work.Error's Code and Error(), carried across a process boundary):
// package work's error with that Code (any of them, work.ErrNotFound to
// work.ErrUnavailable), with message kept when message is that error's,
// with a detail (work.Error.Detail), or another message work gives that
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
