package driver

import (
	"context"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// Run runs the child of attempt a (which Add recorded): run with input
// in ctx (AttemptContext's) given the Work's hooks r (WithRemote),
// whose Event is replaced by a progressGate of obs for a's target and
// kind (no progress event once run returned). The child's Execution is
// recorded as a's (Running) before run starts, and a panic in run is
// reported as panicked (out and err zero) instead of unwinding the
// attempt. ex is the child's Execution, for Classify.
func (s *Slots) Run(ctx context.Context, a *Attempt, obs observe.Observer, r Remote, run func(context.Context, string) (string, error), input string) (out string, panicked bool, ex *work.Execution, err error) {
	emit, end := progressGate(obs, a.Label, a.Kind)
	defer end()
	r.Event = emit
	ctx, ex = attach(ctx, r)
	s.Running(a, ex)
	out, err, panicked = invoke(func() (string, error) { return run(ctx, input) })
	return out, panicked, ex, err
}

// Progress returns the progress counts of a's child: zero until Run (or
// Running) recorded its Execution.
func (s *Slots) Progress(a *Attempt) observe.Progress {
	s.mu.Lock()
	ex := a.exec
	s.mu.Unlock()
	return ex.Progress()
}
