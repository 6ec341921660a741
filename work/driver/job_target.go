package driver

import (
	"fmt"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/internal/seam"
	"github.com/agentwork/agentwork/work/observe"
)

// ValidTarget checks a target that a durable engine's Worker registers
// under label: a label, and either a Run (runs) of kind work.KindAgent or
// work.KindFunction, or a valid job (work.Job.Validate) of kind
// work.KindFunction, never both. Its error, wrapping
// work.ErrInvalidSpec, names the target; the engine prefixes its own
// name.
func ValidTarget(label string, kind observe.Kind, runs bool, job *work.Job) error {
	switch {
	case label == "":
		return fmt.Errorf("a target needs a label: %w", work.ErrInvalidSpec)
	case job != nil && runs:
		return fmt.Errorf("target %q has both a Run and a Job: %w", label, work.ErrInvalidSpec)
	case job != nil:
		if kind != work.KindFunction {
			return fmt.Errorf("target %q: a job is a function target: %w", label, work.ErrInvalidSpec)
		}
		if err := job.Validate(); err != nil {
			return fmt.Errorf("target %q: %w", label, err)
		}
	case !runs || (kind != work.KindAgent && kind != work.KindFunction):
		return fmt.Errorf("target %q needs a label, a Run and a kind: %w", label, work.ErrInvalidSpec)
	}
	return nil
}

// ResolveJob returns j with its defaults applied: MaxPolls and
// MaxPollErrors when not positive (8 and 3), and Backoff's (Initial 1 s,
// Max 30 s, or Initial when that is longer). It does not check j:
// (*work.Job).Validate does.
func ResolveJob(j work.Job) work.Job { return resolveJob(j) }

// resolveJob is work's rule (package seam), its type checked as the
// package initialises.
var resolveJob = seam.ResolveJob.(func(work.Job) work.Job)
