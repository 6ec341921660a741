package langchaingo_test

import (
	"context"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/work"
)

// roundTripModel answers a request whose last message is a tool result
// with a final text, and any other with one tool call: one executor round
// trip is two model requests and one tool call. It reports usage.
type roundTripModel struct{}

func (roundTripModel) Call(ctx context.Context, p string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, roundTripModel{}, p, opts...)
}

func (roundTripModel) GenerateContent(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	info := map[string]any{"PromptTokens": 60, "CompletionTokens": 40}
	if n := len(msgs); n > 0 && msgs[n-1].Role == llms.ChatMessageTypeTool {
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "done", GenerationInfo: info}}}, nil
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{GenerationInfo: info, ToolCalls: []llms.ToolCall{{
		ID: "call_1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "search", Arguments: `{"__arg1":"go"}`}}}}}}, nil
}

// BenchmarkWrappedExecutorRoundTrip is a foreground child agent's whole
// round trip through a Kit (an OpenAIFunctionsAgent executor wrapped by
// FromExecutor: two model requests and one tool call). "budgets=off" runs
// it with no limits at all; "budgets=on" with a per-child budget, a
// ceiling and a pool that the call reserves from and refunds to.
func BenchmarkWrappedExecutorRoundTrip(b *testing.B) {
	for _, tc := range []struct {
		name string
		sup  []work.Option
		kit  []lc.Option
		opts []lc.ChildOption
	}{
		{"budgets=off", []work.Option{work.WithDefaultBudget(work.Budget{MaxTurns: -1, MaxToolCalls: -1, MaxTokens: -1})}, nil, nil},
		{"budgets=on", []work.Option{work.WithBudgetCeiling(work.Budget{MaxTurns: 100, MaxToolCalls: 100, MaxTokens: 1 << 20})},
			[]lc.Option{lc.WithPool(work.Budget{MaxTurns: 1 << 40, MaxToolCalls: 1 << 40, MaxTokens: 1 << 50})},
			[]lc.ChildOption{lc.WithBudget(work.Budget{MaxTurns: 10, MaxToolCalls: 10, MaxTokens: 10000})}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			sup := work.New(tc.sup...)
			defer sup.Close(context.Background())
			exec := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(roundTripModel{}, []tools.Tool{constTool("search", "a result")}))
			child := lc.FromExecutor("researcher", "researches", exec, tc.opts...)
			kit, err := lc.Prepare(context.Background(), sup, &spy{}, []tools.Tool{child}, tc.kit...)
			if err != nil {
				b.Fatal(err)
			}
			tool := kit.Tools()[0]
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				out, err := tool.Call(ctx, "go")
				if err != nil || out != "done" {
					b.Fatalf("%q, %v", out, err)
				}
			}
		})
	}
}
