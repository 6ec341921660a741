package eino_test

import (
	"context"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/components"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentwork/agentwork/adapters/eino"
	"github.com/agentwork/agentwork/adapters/eino/scripted"
	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
)

// spanHandler is a span-making Eino callbacks.Handler, as a tracing
// integration is: an "invoke_agent {name}" span for each agent run and an
// "execute_tool {name}" span for each tool call, put on the context the
// component runs with.
func spanHandler(tr trace.Tracer) callbacks.Handler {
	start := func(ctx context.Context, info *callbacks.RunInfo, _ callbacks.CallbackInput) context.Context {
		switch info.Component {
		case components.ComponentOfTool:
			ctx, _ = tr.Start(ctx, "execute_tool "+info.Name)
		case adk.ComponentOfAgent:
			ctx, _ = tr.Start(ctx, "invoke_agent "+info.Name)
		}
		return ctx
	}
	end := func(ctx context.Context, info *callbacks.RunInfo) context.Context {
		if info.Component == components.ComponentOfTool || info.Component == adk.ComponentOfAgent {
			trace.SpanFromContext(ctx).End()
		}
		return ctx
	}
	return callbacks.NewHandlerBuilder().
		OnStartFn(start).
		OnEndFn(func(ctx context.Context, info *callbacks.RunInfo, _ callbacks.CallbackOutput) context.Context {
			return end(ctx, info)
		}).
		OnErrorFn(func(ctx context.Context, info *callbacks.RunInfo, _ error) context.Context { return end(ctx, info) }).
		OnEndWithStreamOutputFn(func(ctx context.Context, info *callbacks.RunInfo, out *schema.StreamReader[callbacks.CallbackOutput]) context.Context {
			out.Close()
			return end(ctx, info)
		}).
		Build()
}

// TestCallbacksHandlerSpans: under a span-making Eino callbacks.Handler,
// agentwork's spans nest in its trace (a launch, a foreground agent
// child and a work-tool call each under the handler's execute_tool span of
// that call; the background invoke_agent linked to the launch); with
// WithoutToolSpans the handler's spans take the place of agentwork's
// execute_tool spans, so that each call has one.
func TestCallbacksHandlerSpans(t *testing.T) {
	for _, off := range []bool{false, true} {
		t.Run(map[bool]string{false: "both", true: "WithoutToolSpans"}[off], func(t *testing.T) {
			spans := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
			defer tp.Shutdown(context.Background())
			obs, err := telemetry.New(telemetry.WithTracerProvider(tp), telemetry.WithoutMetrics())
			if err != nil {
				t.Fatal(err)
			}
			sup := newSup(t, work.WithObserver(obs))
			var opts []eino.Option
			if off {
				opts = append(opts, eino.WithoutToolSpans())
			}
			mw := eino.New(sup, opts...)
			defer mw.Release()
			researcher := eino.FromAgent(newAgent(t, "researcher", scripted.New(scripted.Text("report")), []tool.BaseTool{}, eino.ChildMiddleware()))
			m := scripted.New(
				scripted.Calls(scripted.ToolCall{ID: "call_fg", Name: "researcher", Arguments: `{"input":"fg"}`}),
				scripted.CallID("call_bg", "fetch", `{"input":"x","run_in_background":true}`),
				scripted.Func(func(r scripted.Request) scripted.Step {
					return scripted.CallID("call_work", "work", `{"action":"result","id":"`+ref(t, r.LastToolResult()).ID+`","timeout":"5s"}`)
				}),
				scripted.Text("done"),
			)
			agent := newAgent(t, "coordinator", m, []tool.BaseTool{researcher, eino.Backgroundable(echo("fetch"))}, mw)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			iter := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Run(ctx, []adk.Message{schema.UserMessage("go")},
				adk.WithCallbacks(spanHandler(tp.Tracer("framework"))))
			for {
				ev, ok := iter.Next()
				if !ok {
					break
				}
				if ev.Err != nil {
					t.Fatal(ev.Err)
				}
			}
			if err := sup.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			byName := map[string][]sdktrace.ReadOnlySpan{}
			byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
			for _, s := range spans.Ended() {
				byName[s.Name()] = append(byName[s.Name()], s)
				byID[s.SpanContext().SpanID()] = s
			}
			root := byName["invoke_agent coordinator"]
			if len(root) != 1 {
				t.Fatalf("the handler made %d coordinator spans, want 1: %v", len(root), names(spans.Ended()))
			}
			trace0 := root[0].SpanContext().TraceID()
			// parent returns the one span named name and its parent's name.
			parent := func(name string) (sdktrace.ReadOnlySpan, string) {
				t.Helper()
				ss := byName[name]
				if len(ss) != 1 {
					t.Fatalf("%d spans named %q, want 1: %v", len(ss), name, names(spans.Ended()))
				}
				p, ok := byID[ss[0].Parent().SpanID()]
				if !ok {
					return ss[0], ""
				}
				return ss[0], p.Name()
			}
			// The handler's span of each call, and under it agentwork's
			// execute_tool span (or, off, nothing of agentwork's).
			for _, call := range []string{"researcher", "fetch", "work"} {
				ss := byName["execute_tool "+call]
				want := 2
				if off {
					want = 1
				}
				if len(ss) != want {
					t.Fatalf("%d spans named execute_tool %s, want %d: %v", len(ss), call, want, names(spans.Ended()))
				}
				for _, s := range ss {
					if s.SpanContext().TraceID() != trace0 {
						t.Errorf("execute_tool %s is not in the handler's trace", call)
					}
				}
			}
			fg, fgParent := parent("invoke_agent researcher")
			if fgParent != "execute_tool researcher" || fg.SpanContext().TraceID() != trace0 {
				t.Errorf("the foreground agent child's span is under %q, want execute_tool researcher, in the handler's trace", fgParent)
			}
			if off {
				if !hasAttr(fg, "gen_ai.provider.name", "scripted") {
					t.Errorf("the foreground agent child's span has no gen_ai.provider.name=scripted: %v", fg.Attributes())
				}
				for _, call := range []string{"researcher", "fetch"} {
					if s := byName["execute_tool "+call][0]; !hasAttr(s, "agentwork.work.target", call) {
						t.Errorf("the handler's execute_tool %s span lacks agentwork's target: %v", call, s.Attributes())
					}
				}
				if s := byName["execute_tool work"][0]; !hasAttr(s, "agentwork.action", "result") {
					t.Errorf("the handler's execute_tool work span lacks agentwork.action: %v", s.Attributes())
				}
			} else {
				for _, call := range []string{"researcher", "fetch", "work"} {
					own := 0
					for _, s := range byName["execute_tool "+call] {
						if p, ok := byID[s.Parent().SpanID()]; ok && p.Name() == "execute_tool "+call {
							own++
						}
					}
					if own != 1 {
						t.Errorf("agentwork's execute_tool %s span is not under the handler's", call)
					}
				}
			}
			bg, _ := parent("invoke_agent fetch")
			if len(bg.Links()) != 1 {
				t.Fatalf("the background invoke_agent has %d links, want 1", len(bg.Links()))
			}
			launch, ok := byID[bg.Links()[0].SpanContext.SpanID()]
			if !ok || launch.Name() != "execute_tool fetch" || launch.SpanContext().TraceID() != trace0 {
				t.Errorf("the background invoke_agent links to %v, want an execute_tool fetch span of the handler's trace", launch)
			}
		})
	}
}

func names(ss []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name())
	}
	return out
}

func hasAttr(s sdktrace.ReadOnlySpan, key, value string) bool {
	for _, a := range s.Attributes() {
		if string(a.Key) == key && a.Value.String() == value {
			return true
		}
	}
	return false
}
