package langchaingo_test

import (
	"context"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/tools"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
)

// TestProviderNameOnEveryAgentChild: the invoke_agent span of every agent
// child carries gen_ai.provider.name: derived from the executor's client,
// named with WithProvider, else telemetry.ProviderUnknown; a function
// child's carries none.
func TestProviderNameOnEveryAgentChild(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(context.Background())
	obs, err := telemetry.New(telemetry.WithTracerProvider(tp), telemetry.WithoutMetrics())
	if err != nil {
		t.Fatal(err)
	}
	sup := work.New(work.WithObserver(obs))
	executor := func() *agents.Executor {
		return agents.NewExecutor(agents.NewOpenAIFunctionsAgent(scripted.New(scripted.Text("done")), nil))
	}
	build := func(context.Context) (*agents.Executor, error) { return executor(), nil }
	children := map[string]string{ // label -> the provider name wanted ("": none)
		"derived":  "scripted",
		"named":    "anthropic",
		"unknown":  telemetry.ProviderUnknown,
		"function": "",
	}
	ts := []tools.Tool{
		lc.Backgroundable(lc.FromExecutor("derived", "d", executor())),
		lc.Backgroundable(lc.NewAgent("named", "d", build, lc.WithProvider("anthropic"))),
		lc.Backgroundable(lc.NewAgent("unknown", "d", build)),
		lc.Backgroundable(lc.NewFunction("function", "d", func(context.Context, string) (string, error) { return "x", nil })),
	}
	kit, err := lc.Prepare(context.Background(), sup, scripted.New(), ts)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range kit.Tools() {
		if tl.Name() == "work" {
			continue
		}
		if out, err := tl.Call(context.Background(), `{"input":"go","run_in_background":true}`); err != nil {
			t.Fatalf("%s: %q, %v", tl.Name(), out, err)
		}
	}
	_ = kit.Release()
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
