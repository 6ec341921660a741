package temporal

import "github.com/agentwork/agentwork/work"

// CancelClosed sends the cancel update straight to Work id's workflow,
// skipping the owner registry's terminal check: a test of an update that
// reaches a workflow that closed after the registry was read.
func (e *Engine) CancelClosed(o work.Owner, id string) error {
	ctx, cancel := e.rpc()
	defer cancel()
	var r cancelReply
	return e.update(ctx, id, updateCancel, &r, o.ID())
}

// ErrWorkflowClosed is errWorkflowClosed, for the tests.
var ErrWorkflowClosed = errWorkflowClosed
