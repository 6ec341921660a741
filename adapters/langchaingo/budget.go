package langchaingo

import (
	"context"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/tools"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

// WithBudget bounds each run of the child: its model requests (turns),
// tool calls, tokens and duration (see work.Budget; zero fields inherit the
// engine's defaults, the ceiling clamps them, and a start reserves the
// budget from the owner's pool when it has one). When turns, tool calls or
// tokens run out, the child's model gets one final request with no tools
// and an instruction to answer now; that answer is the child's output, a
// partial result (work.Status.BudgetExhausted says which budget ran out).
func WithBudget(b work.Budget) ChildOption {
	return childOptionFunc(func(c *middleware.Child) { c.Budget = b })
}

// WithFailOnBudget makes an exhausted budget fail the child (state failed,
// class budget_exhausted) instead of asking its model for a final answer.
func WithFailOnBudget() ChildOption {
	return childOptionFunc(func(c *middleware.Child) { c.FailOnBudget = true })
}

// WithPool gives the coordinator a pool: the total turns, tool calls and
// tokens all the children it starts (background and foreground) may
// reserve (work.Engine.SetPool). A start the pool cannot cover is
// refused with the error object code "budget_exhausted" before any Work
// exists; a settled child's unspent reservation is refunded. Inside a
// child, Prepare fails with WithPool: the child's own children reserve
// from its reservation.
func WithPool(b work.Budget) Option {
	return kitOptionFunc(func(c *kitConfig) { c.pool = &b })
}

// finalCapture holds the answer to a child's final request, for
// runExecutor: an agent that cannot parse it (a text agent's reply without
// "Final Answer:") still gives it as the child's output.
type finalCapture struct {
	text string
	set  bool
}

type finalKey struct{}

// finalOptions drops the request's tools for a final request. The
// anthropic client keeps them when the history has tool calls (the
// Messages API refuses tool_use and tool_result blocks without tool
// definitions, and langchaingo v0.1.14's client cannot send tool_choice
// "none"): the instruction and end both keep the model from calling one.
func finalOptions(inner llms.Model, opts []llms.CallOption, msgs []llms.MessageContent) ([]llms.CallOption, bool) {
	if _, ok := innermost(inner).(*anthropic.LLM); ok && hasToolParts(msgs) {
		return opts, false
	}
	return append(opts[:len(opts):len(opts)], llms.WithFunctions(nil), llms.WithTools(nil), llms.WithToolChoice(nil)), true
}

func hasToolParts(msgs []llms.MessageContent) bool {
	for _, m := range msgs {
		for _, p := range m.Parts {
			switch p.(type) {
			case llms.ToolCall, llms.ToolCallResponse:
				return true
			}
		}
	}
	return false
}

// end records the response's usage and keeps its tool calls within the
// child's allowance: none after a final request, whose text is captured.
func end(ctx context.Context, b middleware.Boundary, resp *llms.ContentResponse) *llms.ContentResponse {
	if !b.InChild() {
		return resp
	}
	in, out, ok := ResponseUsage(resp)
	left := b.End(in, out, ok)
	if resp == nil {
		return nil
	}
	if b.Final() {
		if c, ok := ctx.Value(finalKey{}).(*finalCapture); ok && len(resp.Choices) > 0 && resp.Choices[0] != nil {
			c.text, c.set = resp.Choices[0].Content, true
		}
	}
	if left < 0 {
		return resp
	}
	var cp *llms.ContentResponse
	for i, c := range resp.Choices {
		if c == nil || (len(c.ToolCalls) <= left && (left > 0 || c.FuncCall == nil)) {
			continue
		}
		if cp == nil {
			cp = &llms.ContentResponse{Choices: append([]*llms.ContentChoice(nil), resp.Choices...)}
		}
		cc := *c
		if len(cc.ToolCalls) > left {
			cc.ToolCalls = cc.ToolCalls[:left:left]
		}
		if left == 0 {
			cc.FuncCall = nil
		}
		cp.Choices[i] = &cc
	}
	if cp == nil {
		return resp
	}
	return cp
}

// budgeted is a child agent's tool: each call counts against the child's
// tool-call budget, and a call beyond it (or after the final request) is
// not run.
type budgeted struct{ tools.Tool }

func (t budgeted) Call(ctx context.Context, input string) (string, error) {
	if !middleware.BeginToolCall(ctx) {
		return middleware.ToolNotRun, nil
	}
	return t.Tool.Call(ctx, input)
}

// budgetedSchemer keeps a prepared tool's schema visible.
type budgetedSchemer struct{ budgeted }

func (t budgetedSchemer) Schema() map[string]any { return t.Tool.(middleware.Schemer).Schema() }

// budgetTools wraps a child agent's tools so that their calls are counted.
func budgetTools(ts []tools.Tool) []tools.Tool {
	if len(ts) == 0 {
		return ts
	}
	out := make([]tools.Tool, len(ts))
	for i, t := range ts {
		switch t.(type) {
		case budgeted, budgetedSchemer:
			out[i] = t
		case middleware.Schemer:
			out[i] = budgetedSchemer{budgeted{t}}
		default:
			out[i] = budgeted{t}
		}
	}
	return out
}

// budgetAgentTools counts the tool calls of a copy of a known agent that
// wrapAgentModel made; other agents are returned unchanged (their tool
// calls are not counted).
func budgetAgentTools(a agents.Agent) agents.Agent {
	switch ag := a.(type) {
	case *agents.OpenAIFunctionsAgent:
		ag.Tools = budgetTools(ag.Tools)
	case *agents.OneShotZeroAgent:
		ag.Tools = budgetTools(ag.Tools)
	case *agents.ConversationalAgent:
		ag.Tools = budgetTools(ag.Tools)
	}
	return a
}
