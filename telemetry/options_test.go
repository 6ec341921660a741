package telemetry_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestDefaultsAreGlobals: without provider options New uses the global
// providers; nil options and nil providers are ignored.
func TestDefaultsAreGlobals(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	prevT, prevM := otel.GetTracerProvider(), otel.GetMeterProvider()
	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	defer func() {
		otel.SetTracerProvider(prevT)
		otel.SetMeterProvider(prevM)
	}()
	obs, err := telemetry.New(nil, telemetry.WithTracerProvider(nil), telemetry.WithMeterProvider(nil), telemetry.WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	_, end := obs.Begin(context.Background(), observe.ToolCall{Kind: observe.ToolCallAction, Tool: "work", Action: "list"})
	end(observe.ToolCallEnd{Outcome: "ok"})
	if got := len(spans.Ended()); got != 1 {
		t.Errorf("%d spans on the global provider, want 1", got)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if got := series(rm); len(got) != 1 || got[0] != "agentwork.work.actions{action=list,outcome=ok} 1" {
		t.Errorf("global meter: %q", got)
	}
}

func TestWithoutTracing(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	obs, err := telemetry.New(telemetry.WithTracerProvider(tp), telemetry.WithoutTracing(), telemetry.WithoutMetrics())
	if err != nil {
		t.Fatal(err)
	}
	ctx, caller := tp.Tracer("test").Start(context.Background(), "caller")
	got, end := obs.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallLaunch, Tool: "researcher"})
	end(observe.ToolCallEnd{Outcome: "ok"})
	if got != ctx {
		t.Error("Begin returned a new context with tracing off")
	}
	exec := obs.Bind(ctx, context.Background(), observe.Event{Type: observe.EventQueued, WorkID: "w", Target: "researcher"})
	if trace.SpanContextFromContext(exec).IsValid() {
		t.Error("background execution has a span with tracing off")
	}
	fg := obs.Bind(ctx, context.Background(), observe.Event{Type: observe.EventForeground, Target: "researcher"})
	if trace.SpanFromContext(fg) != caller {
		t.Error("a foreground child does not run under the caller's span with tracing off")
	}
	caller.End()
	if n := len(spans.Ended()); n != 1 {
		t.Errorf("%d spans, want only the caller's", n)
	}
}

func TestWithoutMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	obs, err := telemetry.New(telemetry.WithMeterProvider(mp), telemetry.WithoutMetrics(), telemetry.WithoutTracing())
	if err != nil {
		t.Fatal(err)
	}
	s := work.New(work.WithObserver(obs))
	o := work.NewOwner("o")
	ref, err := s.Start(context.Background(), work.Spec{Owner: o, Target: researcher, Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	_, _, _ = s.Result(context.Background(), o, ref.ID, work.MaxResultWait)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if len(rm.ScopeMetrics) != 0 {
		t.Errorf("metrics with metrics off: %q", series(rm))
	}
}

func TestUnregister(t *testing.T) {
	h := newHarness(t)
	if err := h.obs.Unregister(); err != nil {
		t.Fatal(err)
	}
	for _, s := range series(h.collect()) {
		if strings.HasPrefix(s, "agentwork.work.items") || strings.HasPrefix(s, "agentwork.work.concurrency_limit") {
			t.Errorf("gauge after Unregister: %s", s)
		}
	}
}

// TestAPIOnly: the telemetry package itself imports no OTel SDK package
// and no Prometheus package (promexport does).
func TestAPIOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/agentwork/agentwork/telemetry").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "go.opentelemetry.io/otel/sdk") || strings.HasPrefix(dep, "github.com/prometheus/") {
			t.Errorf("telemetry depends on %s", dep)
		}
	}
}
