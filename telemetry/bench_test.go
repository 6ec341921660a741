package telemetry_test

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// benchLifecycle runs one full background lifecycle per iteration, as the
// middleware drives it: a launch call around Start, the child running and
// completing on its own goroutine, and a result action that waits for and
// reads the output.
func benchLifecycle(b *testing.B, obs observe.Observer, reset func()) {
	s := work.New(work.WithObserver(obs), work.WithMaxStarts(0))
	defer s.Close(context.Background())
	owner := work.NewOwner("bench")
	spec := work.Spec{Owner: owner, Target: researcher, Run: func(context.Context) (string, error) {
		return "a short result", nil
	}}
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		lctx, end := obs.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallLaunch, Tool: "researcher", CallID: "call_1", Owner: owner.ID()})
		ref, err := s.Start(lctx, spec)
		if err != nil {
			b.Fatal(err)
		}
		end(observe.ToolCallEnd{WorkID: ref.ID, Outcome: "ok"})
		actx, end := obs.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallAction, Tool: "work", Action: "result", WorkID: ref.ID, CallID: "call_2", Owner: owner.ID()})
		st, _, err := s.Result(actx, owner, ref.ID, work.MaxResultWait)
		if err != nil || st.State != work.StateCompleted {
			b.Fatal(st.State, err)
		}
		end(observe.ToolCallEnd{Outcome: "ok"})
		if i++; i%1024 == 0 && reset != nil {
			reset()
		}
	}
}

// BenchmarkLifecycleTelemetry: the lifecycle with the telemetry Observer on
// the SDK, every span sampled and exported synchronously to an in-memory
// exporter, metrics aggregated for a manual reader (collected every 1,024
// lifecycles, when the exporter is also emptied).
func BenchmarkLifecycleTelemetry(b *testing.B) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer tp.Shutdown(context.Background())
	defer mp.Shutdown(context.Background())
	obs, err := telemetry.New(telemetry.WithTracerProvider(tp), telemetry.WithMeterProvider(mp))
	if err != nil {
		b.Fatal(err)
	}
	benchLifecycle(b, obs, func() {
		exp.Reset()
		var rm metricdata.ResourceMetrics
		_ = reader.Collect(context.Background(), &rm)
	})
}

// BenchmarkLifecycleNop: the same lifecycle with the engine's no-op
// Observer.
func BenchmarkLifecycleNop(b *testing.B) {
	benchLifecycle(b, observe.NopObserver{}, nil)
}
