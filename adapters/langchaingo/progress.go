package langchaingo

import (
	"context"

	"github.com/tmc/langchaingo/tools"

	"github.com/agentwork/agentwork/work"
)

// Agent children report progress automatically, as counts only: the
// wrapped model counts each model request (Model.GenerateContent) and the
// child's tools, wrapped when FromExecutor or NewAgent copies a known
// agent, count each tool call (work.Execution.CountModelRequest,
// CountToolCall). Outside a background child both do nothing.

// countedTool counts each call in the child's progress.
type countedTool struct{ tools.Tool }

func (t countedTool) Call(ctx context.Context, input string) (string, error) {
	if ex, ok := work.ExecutionFrom(ctx); ok {
		ex.CountToolCall()
	}
	return t.Tool.Call(ctx, input)
}

// countTools returns a copy of ts whose calls are counted.
func countTools(ts []tools.Tool) []tools.Tool {
	out := make([]tools.Tool, len(ts))
	for i, t := range ts {
		if _, ok := t.(countedTool); ok || t == nil {
			out[i] = t
			continue
		}
		out[i] = countedTool{t}
	}
	return out
}

// countModelRequest counts one model request of the child ctx belongs to.
func countModelRequest(ctx context.Context) {
	if ex, ok := work.ExecutionFrom(ctx); ok {
		ex.CountModelRequest()
	}
}
