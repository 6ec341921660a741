// Package einobench holds the Eino adapter's Goal benchmark: an Eino
// ChatModelAgent's round trip with agentwork's middleware and without,
// in one run (make bench).
package einobench

import (
	"context"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"go.uber.org/goleak"

	"github.com/agentwork/agentwork/adapters/eino"
	"github.com/agentwork/agentwork/adapters/eino/scripted"
	"github.com/agentwork/agentwork/bench/internal/benchpair"
	"github.com/agentwork/agentwork/work"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// source is the model of the current round trip of one arm.
type source struct{ cur model.ToolCallingChatModel }

// relay forwards to its source's current model (with the tools the agent
// bound), so that an agent built once answers each round trip from a
// fresh script.
type relay struct {
	src   *source
	tools []*schema.ToolInfo
}

func (r *relay) model() model.ToolCallingChatModel {
	if r.tools == nil {
		return r.src.cur
	}
	m, _ := r.src.cur.WithTools(r.tools)
	return m
}

func (r *relay) Generate(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	return r.model().Generate(ctx, in, opts...)
}

func (r *relay) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	return r.model().Stream(ctx, in, opts...)
}

func (r *relay) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return &relay{src: r.src, tools: tools}, nil
}

// fixedModel answers every conversation from two prebuilt messages: a
// call of clock, then (after its result) the answer. It allocates nothing
// itself.
type fixedModel struct{ call, final *schema.Message }

func newFixedModel() fixedModel {
	return fixedModel{
		call:  schema.AssistantMessage("", []schema.ToolCall{{ID: "call_1", Type: "function", Function: schema.FunctionCall{Name: "clock", Arguments: `{}`}}}),
		final: schema.AssistantMessage("It is noon.", nil),
	}
}

func (f fixedModel) Generate(_ context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	if n := len(in); n > 0 && in[n-1].Role == schema.Tool {
		return f.final, nil
	}
	return f.call, nil
}

func (f fixedModel) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	m, err := f.Generate(ctx, in, opts...)
	return schema.StreamReaderFromArray([]*schema.Message{m}), err
}

func (f fixedModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return f, nil }

// BenchmarkGoalEinoRoundTrip: one round trip of an Eino ChatModelAgent (a
// model request with a call of an ordinary tool, the tool, a model
// request with the answer) with a child among its tools, unwrapped (no
// agentwork: the child a plain function tool) and wrapped (agentwork's
// Middleware in its Handlers, the child backgroundable: the work tool is
// added and every request checks for the status block), in alternating
// chunks of one run. model=scripted answers each round trip from a fresh
// two-step scripted model; model=fixed from two prebuilt messages.
// x-unwrapped is wrapped / unwrapped time (goal: at most 1.15),
// added-allocs/op the allocations wrapping adds. A third arm, handler,
// is the unwrapped agent with a no-op ChatModelAgentMiddleware: Eino's
// own cost of running any middleware (its run takes another path), so
// that x-handler and added-allocs-vs-handler/op are agentwork's share.
func BenchmarkGoalEinoRoundTrip(b *testing.B) {
	for _, tc := range []struct {
		name string
		next func() model.ToolCallingChatModel
	}{
		{"scripted", func() model.ToolCallingChatModel {
			return scripted.New(scripted.Call("clock", `{}`), scripted.Text("It is noon."))
		}},
		{"fixed", func() model.ToolCallingChatModel { return newFixedModel() }},
	} {
		b.Run("model="+tc.name, func(b *testing.B) {
			ctx := context.Background()
			clock, err := utils.InferTool("clock", "Tells the time.", func(context.Context, struct{}) (string, error) { return "12:00", nil })
			if err != nil {
				b.Fatal(err)
			}
			research := func() *eino.Child {
				return eino.NewFunction("research", "Researches.", func(_ context.Context, in string) (string, error) { return "found " + in, nil })
			}
			sup := work.New()
			defer sup.Close(ctx)
			mw := eino.New(sup)
			defer mw.Release()
			plainSrc, handlerSrc, wrappedSrc := &source{}, &source{}, &source{}
			plain := runner(b, &relay{src: plainSrc}, []tool.BaseTool{clock, research()})
			handler := runner(b, &relay{src: handlerSrc}, []tool.BaseTool{clock, research()}, &adk.BaseChatModelAgentMiddleware{})
			wrapped := runner(b, &relay{src: wrappedSrc}, []tool.BaseTool{clock, eino.Backgroundable(research())}, mw)
			fixed := tc.next()
			next := tc.next
			if tc.name == "fixed" {
				next = func() model.ToolCallingChatModel { return fixed }
			}
			arm := func(name string, src *source, r *adk.Runner) benchpair.Arm {
				return benchpair.Arm{Name: name, Run: func(n int) func() {
					for range n {
						src.cur = next()
						if out, err := roundTrip(ctx, r); err != nil || out != "It is noon." {
							b.Fatalf("%s round trip: %q, %v", name, out, err)
						}
					}
					return nil
				}}
			}
			b.ReportAllocs()
			r := benchpair.Run(b, 16, arm("unwrapped", plainSrc, plain), arm("wrapped", wrappedSrc, wrapped), arm("handler", handlerSrc, handler))
			b.ReportMetric(r[1].NsPerOp/r[0].NsPerOp, "x-unwrapped")
			b.ReportMetric(r[1].AllocsPerOp-r[0].AllocsPerOp, "added-allocs/op")
			b.ReportMetric(r[1].NsPerOp/r[2].NsPerOp, "x-handler")
			b.ReportMetric(r[1].AllocsPerOp-r[2].AllocsPerOp, "added-allocs-vs-handler/op")
		})
	}
}

func runner(b *testing.B, m model.ToolCallingChatModel, tools []tool.BaseTool, handlers ...adk.ChatModelAgentMiddleware) *adk.Runner {
	agent, err := adk.NewChatModelAgent(context.Background(), &adk.ChatModelAgentConfig{
		Name: "assistant", Description: "Helps.", Instruction: "You help.", Model: m,
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: tools}},
		Handlers:    handlers,
	})
	if err != nil {
		b.Fatal(err)
	}
	return adk.NewRunner(context.Background(), adk.RunnerConfig{Agent: agent})
}

// roundTrip runs the agent once and returns its answer.
func roundTrip(ctx context.Context, r *adk.Runner) (string, error) {
	iter := r.Query(ctx, "What time is it?")
	var out string
	var runErr error
	for {
		ev, ok := iter.Next()
		if !ok {
			return out, runErr
		}
		if ev.Err != nil {
			runErr = ev.Err
			continue
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil {
			if m := ev.Output.MessageOutput.Message; m != nil && m.Role == schema.Assistant && len(m.ToolCalls) == 0 {
				out = m.Content
			}
		}
	}
}
