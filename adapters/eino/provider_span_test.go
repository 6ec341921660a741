package eino_test

import (
	"context"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentwork/agentwork/adapters/eino"
	"github.com/agentwork/agentwork/adapters/eino/scripted"
	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
)

// TestProviderNameOnEveryAgentChild: the invoke_agent span of every agent
// child carries gen_ai.provider.name: derived from the agent's model
// (FromAgent), named with WithProvider (NewAgent builds its agent per
// run), else telemetry.ProviderUnknown; a function child's carries none.
func TestProviderNameOnEveryAgentChild(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(context.Background())
	obs, err := telemetry.New(telemetry.WithTracerProvider(tp), telemetry.WithoutMetrics())
	if err != nil {
		t.Fatal(err)
	}
	sup := work.New(work.WithObserver(obs))
	agent := func(name string) *adk.ChatModelAgent {
		return newAgent(t, name, scripted.New(scripted.Text("done")), []tool.BaseTool{}, eino.ChildMiddleware())
	}
	build := func(name string) func(context.Context) (adk.Agent, error) {
		return func(context.Context) (adk.Agent, error) { return agent(name), nil }
	}
	children := map[string]string{ // label -> the provider name wanted ("": none)
		"derived":  "scripted",
		"named":    "anthropic",
		"unknown":  telemetry.ProviderUnknown,
		"function": "",
	}
	m := scripted.New(scripted.Calls(
		scripted.ToolCall{Name: "derived", Arguments: `{"input":"go","run_in_background":true}`},
		scripted.ToolCall{Name: "named", Arguments: `{"input":"go","run_in_background":true}`},
		scripted.ToolCall{Name: "unknown", Arguments: `{"input":"go","run_in_background":true}`},
		scripted.ToolCall{Name: "function", Arguments: `{"input":"go","run_in_background":true}`},
	), scripted.Text("launched"))
	mw := eino.New(sup)
	mustRun(t, newAgent(t, "coordinator", m, []tool.BaseTool{
		eino.Backgroundable(eino.FromAgent(agent("derived"))),
		eino.Backgroundable(eino.NewAgent("named", "d", build("named"), eino.WithProvider("anthropic"))),
		eino.Backgroundable(eino.NewAgent("unknown", "d", build("unknown"))),
		eino.Backgroundable(echo("function")),
	}, mw), "go")
	_ = mw.Release()
	if err := sup.Close(context.Background()); err != nil { // the spans end with their Work
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, s := range spans.Ended() {
		for label, want := range children {
			if s.Name() != "invoke_agent "+label {
				continue
			}
			seen[label] = true
			got := ""
			for _, a := range s.Attributes() {
				if a.Key == "gen_ai.provider.name" {
					got = a.Value.AsString()
				}
			}
			if got != want {
				t.Errorf("invoke_agent %s: gen_ai.provider.name = %q, want %q", label, got, want)
			}
		}
	}
	if len(seen) != len(children) {
		t.Fatalf("invoke_agent spans of %v, want all of %v", seen, children)
	}
}
