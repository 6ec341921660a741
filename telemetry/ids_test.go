package telemetry_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// spanAttr returns the value of key on span, and whether it is set.
func spanAttr(span sdktrace.ReadOnlySpan, key attribute.Key) (string, bool) {
	for _, kv := range span.Attributes() {
		if kv.Key == key {
			return kv.Value.String(), true
		}
	}
	return "", false
}

// TestToolCallIDShape: gen_ai.tool.call.id is recorded only for a
// provider-issued shape, 1 to 64 ASCII letters, digits, '_' and '-'.
func TestToolCallIDShape(t *testing.T) {
	for _, tc := range []struct {
		id   string
		kept bool
	}{
		{"call_abc123XYZ", true},
		{"toolu_01A09q90qw90lq917835lq9", true},
		{"tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", true},
		{"D681PevKs", true},
		{"a", true},
		{"call-1", true},
		{strings.Repeat("x", 64), true},
		{"", false},
		{strings.Repeat("x", 65), false},
		{strings.Repeat("x", 128), false},
		{"call.1", false},
		{"call:1", false},
		{"coord/step-1/call-1", false},
		{"call 1", false},
		{"ignore previous instructions", false},
		{"call_\u00e9", false},
		{"call_1\n", false},
	} {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		obs, err := telemetry.New(telemetry.WithTracerProvider(tp), telemetry.WithoutMetrics())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []observe.ToolCall{
			{Kind: observe.ToolCallAction, Tool: "work", Action: "list", CallID: tc.id, Owner: "o"},
			{Kind: observe.ToolCallLaunch, Tool: "research", CallID: tc.id, Owner: "o"},
			{Kind: observe.ToolCallForeground, Tool: "research", CallID: tc.id, Owner: "o"},
		} {
			_, end := obs.Begin(context.Background(), c)
			end(observe.ToolCallEnd{Outcome: "ok"})
		}
		spans := rec.Ended()
		if len(spans) != 3 {
			t.Fatalf("%d spans", len(spans))
		}
		for _, sp := range spans {
			got, has := spanAttr(sp, "gen_ai.tool.call.id")
			if has != tc.kept || (has && got != tc.id) {
				t.Errorf("%q on %s: recorded %v (%q), want %v", tc.id, sp.Name(), has, got, tc.kept)
			}
		}
		_ = tp.Shutdown(context.Background())
	}
}

// TestActionWorkIDOnlyForOwnWork: through the middleware, the "execute_tool
// work" span carries agentwork.work.id only when the action names a Work
// of the calling owner; an id that is unknown, another owner's or detached
// (a string the model wrote) never reaches the span.
func TestActionWorkIDOnlyForOwnWork(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	obs, err := telemetry.New(telemetry.WithTracerProvider(tp), telemetry.WithoutMetrics())
	if err != nil {
		t.Fatal(err)
	}
	sup := work.New(work.WithObserver(obs))
	release := make(chan struct{})
	defer func() {
		close(release)
		if err := sup.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	entries := map[string]any{"research": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent,
		Run: func(ctx context.Context, _ string) (string, error) {
			select {
			case <-release:
				return "done", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}})}
	prep := func(owner string) (child, workTool middleware.Tool) {
		s, err := middleware.Prepare(sup, work.NewOwner(owner), entries)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range s.Tools() {
			if tl.Name() == middleware.WorkToolName {
				workTool = tl
			} else {
				child = tl
			}
		}
		return child, workTool
	}
	launch := func(child middleware.Tool) string {
		out, _ := child.Call(context.Background(), `{"input":"x","run_in_background":true}`)
		const pre = `{"kind":"work.ref","id":"`
		if !strings.HasPrefix(out, pre) {
			t.Fatalf("launch: %s", out)
		}
		return out[len(pre) : len(pre)+32]
	}
	myChild, myWork := prep("coord")
	otherChild, _ := prep("other")
	mine, foreign := launch(myChild), launch(otherChild)
	const unknown = "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name, input, want string
	}{
		{"status of own work", `{"action":"status","id":"` + mine + `"}`, mine},
		{"status of an unknown id", `{"action":"status","id":"` + unknown + `"}`, ""},
		{"cancel of an unknown id", `{"action":"cancel","id":"` + unknown + `"}`, ""},
		{"send to an unknown id", `{"action":"send","id":"` + unknown + `","message":"go"}`, ""},
		{"status of a foreign id", `{"action":"status","id":"` + foreign + `"}`, ""},
		{"result of a foreign id", `{"action":"result","id":"` + foreign + `","timeout":0}`, ""},
		{"detach of a foreign id", `{"action":"detach","id":"` + foreign + `"}`, ""},
		{"detach of own work", `{"action":"detach","id":"` + mine + `"}`, mine},
		{"status after detach", `{"action":"status","id":"` + mine + `"}`, ""},
	} {
		before := len(rec.Ended())
		if _, err := myWork.Call(context.Background(), tc.input); err != nil {
			t.Fatal(err)
		}
		var span sdktrace.ReadOnlySpan
		for _, sp := range rec.Ended()[before:] {
			if sp.Name() == "execute_tool work" {
				span = sp
			}
		}
		if span == nil {
			t.Fatalf("%s: no execute_tool work span", tc.name)
		}
		got, has := spanAttr(span, "agentwork.work.id")
		if tc.want == "" && has {
			t.Errorf("%s: agentwork.work.id = %q on the span; the Work is not the owner's", tc.name, got)
		}
		if tc.want != "" && got != tc.want {
			t.Errorf("%s: agentwork.work.id = %q, want %q", tc.name, got, tc.want)
		}
	}
}
