package eino_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/schema"

	"github.com/agentwork/agentwork/adapters/eino"
)

// loopModel answers every conversation the same way, with no state: a
// tool call of clock, then (after its result) a final answer.
type loopModel struct{}

func (loopModel) Generate(_ context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	if in[len(in)-1].Role == schema.Tool || (len(in) > 1 && in[len(in)-2].Role == schema.Tool) {
		return schema.AssistantMessage("It is noon.", nil), nil
	}
	return schema.AssistantMessage("", []schema.ToolCall{{ID: "call_1", Type: "function", Function: schema.FunctionCall{Name: "clock", Arguments: `{}`}}}), nil
}

func (m loopModel) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	return schema.StreamReaderFromArray([]*schema.Message{msg}), err
}

func (m loopModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return m, nil }

// roundTripAgents returns the same agent (an ordinary tool call, then an
// answer, on loopModel, with a child among its tools) unwrapped (the
// child a plain tool), and wrapped: with the agentwork middleware and the
// child backgroundable, so that the work tool is added and every request
// gets the status block check.
func roundTripAgents(b *testing.B) (plain, wrapped *adk.Runner, release func()) {
	clock, err := utils.InferTool("clock", "Tells the time.", func(context.Context, struct{}) (string, error) { return "12:00", nil })
	if err != nil {
		b.Fatal(err)
	}
	sup := newSup(b)
	mw := eino.New(sup)
	ctx := context.Background()
	p := newAgent(b, "assistant", loopModel{}, []tool.BaseTool{clock, echo("research")})
	w := newAgent(b, "assistant", loopModel{}, []tool.BaseTool{clock, eino.Backgroundable(echo("research"))}, mw)
	return adk.NewRunner(ctx, adk.RunnerConfig{Agent: p}), adk.NewRunner(ctx, adk.RunnerConfig{Agent: w}), func() { _ = mw.Release() }
}

func roundTrip(b *testing.B, r *adk.Runner) {
	answer, err := collectRun(r.Query(context.Background(), "What time is it?"))
	if err != nil || answer != "It is noon." {
		b.Fatalf("round trip: %q %v", answer, err)
	}
}

func collectRun(iter *adk.AsyncIterator[*adk.AgentEvent]) (string, error) {
	var out string
	var runErr error
	for {
		ev, ok := iter.Next()
		if !ok {
			return out, runErr
		}
		if ev.Err != nil {
			runErr = ev.Err
		} else if ev.Output != nil && ev.Output.MessageOutput != nil && ev.Output.MessageOutput.Message != nil && len(ev.Output.MessageOutput.Message.ToolCalls) == 0 && ev.Output.MessageOutput.Message.Role == schema.Assistant {
			out = ev.Output.MessageOutput.Message.Content
		}
	}
}

// BenchmarkRoundTrip: one agent round trip (a model request with a tool
// call, the tool, a model request with the answer) on an Eino
// ChatModelAgent, unwrapped and wrapped, each with -benchmem's
// allocations.
func BenchmarkRoundTrip(b *testing.B) {
	plain, wrapped, release := roundTripAgents(b)
	defer release()
	b.Run("unwrapped", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			roundTrip(b, plain)
		}
	})
	b.Run("wrapped", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			roundTrip(b, wrapped)
		}
	})
}

// BenchmarkGoalEinoRoundTrip runs the two arms interleaved in one loop
// (the same machine state for both) and reports each arm's time and
// allocations per round trip and their ratio (goal: at most 1.15).
func BenchmarkGoalEinoRoundTrip(b *testing.B) {
	plain, wrapped, release := roundTripAgents(b)
	defer release()
	var tp, tw time.Duration
	var ap, aw uint64
	var ms runtime.MemStats
	measure := func(r *adk.Runner, d *time.Duration, allocs *uint64) {
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		start := time.Now()
		roundTrip(b, r)
		*d += time.Since(start)
		runtime.ReadMemStats(&ms)
		*allocs += ms.Mallocs - before
	}
	n := 0
	for b.Loop() {
		if n%2 == 0 {
			measure(plain, &tp, &ap)
			measure(wrapped, &tw, &aw)
		} else {
			measure(wrapped, &tw, &aw)
			measure(plain, &tp, &ap)
		}
		n++
	}
	b.ReportMetric(float64(tp.Nanoseconds())/float64(n), "unwrapped-ns/op")
	b.ReportMetric(float64(tw.Nanoseconds())/float64(n), "wrapped-ns/op")
	b.ReportMetric(float64(ap)/float64(n), "unwrapped-allocs/op")
	b.ReportMetric(float64(aw)/float64(n), "wrapped-allocs/op")
	b.ReportMetric(float64(tw)/float64(tp), "ratio")
}
