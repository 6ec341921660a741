package middleware

import "github.com/agentwork/agentwork/work"

// checkWaits refuses, at Prepare, a child whose waiting cannot work: a Job
// on an agent child or one work.Job.Validate refuses (ErrInvalidChild), a
// child that needs approval but cannot run in the background
// (ErrInvalidChild), and a negative ApprovalTimeout (ErrNegativeLimit).
func checkWaits(label string, c Child, background bool) error {
	if c.Job != nil {
		if c.Kind != work.KindFunction {
			return prepErr(ErrInvalidChild, "middleware: child %q: a job is a function child (Kind work.KindFunction)", label)
		}
		if err := c.Job.Validate(); err != nil {
			return prepErr(ErrInvalidChild, "middleware: child %q: %v", label, err)
		}
	}
	if c.NeedsApproval && !background {
		return prepErr(ErrInvalidChild, "middleware: child %q needs approval, so it must be backgroundable (wrap it with Backgroundable): a foreground call cannot wait for a person", label)
	}
	if c.ApprovalTimeout < 0 {
		return prepErr(ErrNegativeLimit, "middleware: child %q: ApprovalTimeout is negative (%s)", label, c.ApprovalTimeout)
	}
	return nil
}
