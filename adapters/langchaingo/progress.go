package langchaingo

import (
	"context"

	"github.com/agentwork/agentwork/work"
)

// Agent children report progress automatically, as counts only: the
// wrapped model counts each model request (Model.GenerateContent) and the
// child's tools, wrapped when FromExecutor or NewAgent copies a known agent
// (budget.go), count each tool call they run (work.Execution's
// CountModelRequest and CountToolCall). Outside a background child both do
// nothing.

// countModelRequest counts one model request of the child ctx belongs to.
func countModelRequest(ctx context.Context) {
	if ex, ok := work.ExecutionFrom(ctx); ok {
		ex.CountModelRequest()
	}
}
