package langchaingobench

import (
	"context"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/bench/internal/benchpair"
	"github.com/agentwork/agentwork/work"
)

// relay forwards to the model of the current round trip, so that an
// executor (and a Kit) built once can answer from a fresh script each time.
type relay struct{ cur llms.Model }

func (r *relay) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	return r.cur.GenerateContent(ctx, msgs, opts...)
}

func (r *relay) Call(ctx context.Context, p string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, r, p, opts...)
}

// fixedModel answers from two prebuilt responses: one tool call of
// "search" while the last message is not a tool result, then "done". It
// allocates nothing itself.
type fixedModel struct{ call, final *llms.ContentResponse }

func newFixedModel() fixedModel {
	info := map[string]any{"PromptTokens": 60, "CompletionTokens": 40}
	return fixedModel{
		call: &llms.ContentResponse{Choices: []*llms.ContentChoice{{GenerationInfo: info, StopReason: "tool_calls", ToolCalls: []llms.ToolCall{{
			ID: "call_1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "search", Arguments: `{"__arg1":"go"}`}}}}}},
		final: &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "done", StopReason: "stop", GenerationInfo: info}}},
	}
}

func (f fixedModel) GenerateContent(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	if n := len(msgs); n > 0 && msgs[n-1].Role == llms.ChatMessageTypeTool {
		return f.final, nil
	}
	return f.call, nil
}

func (f fixedModel) Call(ctx context.Context, p string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, f, p, opts...)
}

// BenchmarkGoalRoundTrip: one executor round trip of an
// OpenAIFunctionsAgent (two model requests, one call of an ordinary tool),
// run directly ("unwrapped": chains.Run on the executor) and as a
// foreground child through a Kit prepared once ("wrapped": the Kit's tool,
// FromExecutor, the engine's foreground call and default budgets), in
// alternating chunks of one run. model=scripted answers each round trip
// from a fresh two-step scripted.Model; model=fixed from two prebuilt
// responses. x-unwrapped is wrapped / unwrapped time, added-allocs/op the
// allocations wrapping adds.
func BenchmarkGoalRoundTrip(b *testing.B) {
	for _, tc := range []struct {
		name string
		next func() llms.Model
	}{
		{"scripted", func() llms.Model { return scripted.New(scripted.FunctionsCall("search", "go"), scripted.Text("done")) }},
		{"fixed", func() llms.Model { m := newFixedModel(); return m }},
	} {
		b.Run("model="+tc.name, func(b *testing.B) {
			ctx := context.Background()
			fixed := tc.next()
			next := tc.next
			if tc.name == "fixed" {
				next = func() llms.Model { return fixed }
			}
			rawModel, wrapModel := &relay{}, &relay{}
			search := []tools.Tool{constTool{"search", "a result"}}
			raw := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(rawModel, search))
			sup := work.New()
			defer sup.Close(ctx)
			child := lc.FromExecutor("researcher", "researches", agents.NewExecutor(agents.NewOpenAIFunctionsAgent(wrapModel, search)))
			kit, err := lc.Prepare(ctx, sup, &relay{}, []tools.Tool{child})
			if err != nil {
				b.Fatal(err)
			}
			tool := kit.Tools()[0]
			b.ReportAllocs()
			r := benchpair.Run(b, 16,
				benchpair.Arm{Name: "unwrapped", Run: func(n int) func() {
					for range n {
						rawModel.cur = next()
						out, err := chains.Run(ctx, raw, "go")
						if err != nil || out != "done" {
							b.Fatalf("%q, %v", out, err)
						}
					}
					return nil
				}},
				benchpair.Arm{Name: "wrapped", Run: func(n int) func() {
					for range n {
						wrapModel.cur = next()
						out, err := tool.Call(ctx, "go")
						if err != nil || out != "done" {
							b.Fatalf("%q, %v", out, err)
						}
					}
					return nil
				}},
			)
			b.ReportMetric(r[1].NsPerOp/r[0].NsPerOp, "x-unwrapped")
			b.ReportMetric(r[1].AllocsPerOp-r[0].AllocsPerOp, "added-allocs/op")
		})
	}
}

// constTool is a tool that returns out for every input.
type constTool struct{ name, out string }

func (c constTool) Name() string                                 { return c.name }
func (c constTool) Description() string                          { return "Returns a constant." }
func (c constTool) Call(context.Context, string) (string, error) { return c.out, nil }
