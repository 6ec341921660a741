package work

import "context"

// Remote describes a child run that an Engine other than the Supervisor
// executes (for example on a worker process of a durable runner), so that
// the child finds the same Execution in its context as under the
// Supervisor.
type Remote struct {
	// WorkID is the Work's id.
	WorkID string
	// Owner is the Work's owner: the child's own scope is one level
	// deeper (the depth limit applies to Work started in it).
	Owner Owner
	// Guidance drains the Work's guidance at a model-request boundary:
	// it returns the messages accepted since the last call, in order. It
	// may be nil (no guidance).
	Guidance func() []string
}

// WithRemote returns ctx carrying an Execution for r: WorkID returns
// r.WorkID, Scope an owner one level deeper than r.Owner, and Guidance
// calls r.Guidance. Budgets and progress are not counted for a remote run
// (its budget methods behave as outside a child run). An Engine calls it
// on the context it runs a child with; the scope's Work is the engine's to
// release when the child returns.
func WithRemote(ctx context.Context, r Remote) context.Context {
	scope := Owner{id: r.Owner.id + "/" + r.WorkID, depth: r.Owner.depth + 1}
	return context.WithValue(ctx, execKey{}, &Execution{scope: scope, remote: &r})
}
