package telemetrybench

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// observeLifecycle makes the Observer calls of one background lifecycle,
// in the order and from the contexts the engine and the middleware use
// (see lifecycle.run), without the engine: a launch, the Work's queued,
// running and completed events, a result action and its result-read
// event.
func observeLifecycle(obs *telemetry.Observer, owner, id, callID string, t0 observe.Event) {
	ctx := context.Background()
	base := observe.Event{WorkID: id, Owner: owner, Target: researcher.Label, Kind: researcher.Kind, Time: t0.Time}
	lctx, end := obs.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallLaunch, Tool: researcher.Label, CallID: callID, Owner: owner})
	ev := base
	ev.Type, ev.To = observe.EventQueued, work.StateQueued
	exec := obs.Bind(lctx, context.Background(), ev)
	obs.Event(exec, ev)
	ev = base
	ev.Type, ev.From, ev.To, ev.QueueWait = observe.EventRunning, work.StateQueued, work.StateRunning, 1
	obs.Event(exec, ev)
	end(observe.ToolCallEnd{WorkID: id, Outcome: "ok"})
	_, end = obs.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallAction, Tool: "work", Action: "result", WorkID: id, CallID: callID, Owner: owner})
	ev = base
	ev.Type, ev.From, ev.To, ev.Duration, ev.Bytes = observe.EventCompleted, work.StateRunning, work.StateCompleted, 1, 14
	obs.Event(exec, ev)
	ev = base
	ev.Type, ev.Bytes = observe.EventResultRead, 14
	obs.Event(exec, ev)
	end(observe.ToolCallEnd{Outcome: "ok"})
}

// TestHotPathAllocations: the Observer's part of a lifecycle allocates
// clearly less than the SDK floor (the same spans, events and records
// made directly with the SDK, goal_bench_test.go), which builds its
// attribute and option slices per call: the Observer reuses them.
func TestHotPathAllocations(t *testing.T) {
	osdk, fsdk := newSDK(), newSDK()
	defer osdk.shutdown()
	defer fsdk.shutdown()
	obs, err := telemetry.New(telemetry.WithTracerProvider(osdk.tp), telemetry.WithMeterProvider(osdk.mp))
	if err != nil {
		t.Fatal(err)
	}
	fl := newFloor(fsdk)
	owner := work.NewOwner("alloc").ID()
	id := "0123456789abcdef0123456789abcdef"
	got := testing.AllocsPerRun(500, func() {
		observeLifecycle(obs, owner, id, "call_1", observe.Event{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	})
	floor := testing.AllocsPerRun(500, fl.run)
	// The pools behind the reuse drop some of what they hold under the
	// race detector, hence the margin.
	if got > floor-12 {
		t.Errorf("the Observer's lifecycle allocates %.1f objects, the SDK floor %.1f: want at most %.1f", got, floor, floor-12)
	}
}

// TestConcurrentLifecycles: lifecycles observed at once on many
// goroutines each get exactly their own attributes (the reused buffers
// never leak one call's values into another's span).
func TestConcurrentLifecycles(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	defer tp.Shutdown(context.Background())
	mp := sdkmetric.NewMeterProvider()
	defer mp.Shutdown(context.Background())
	obs, err := telemetry.New(telemetry.WithTracerProvider(tp), telemetry.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	const n, each = 8, 50
	var wg sync.WaitGroup
	for g := range n {
		wg.Go(func() {
			for i := range each {
				k := g*each + i
				observeLifecycle(obs, fmt.Sprintf("owner%d", k), fmt.Sprintf("%032x", k+1), fmt.Sprintf("call_%d", k), observe.Event{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
			}
		})
	}
	wg.Wait()
	ended := spans.Ended()
	if len(ended) != 3*n*each {
		t.Fatalf("%d spans ended, want %d", len(ended), 3*n*each)
	}
	for _, s := range ended {
		attrs := map[string]string{}
		for _, kv := range s.Attributes() {
			attrs[string(kv.Key)] = kv.Value.String()
		}
		var k int
		if _, err := fmt.Sscanf(attrs["agentwork.work.id"], "%x", &k); err != nil {
			t.Fatalf("%s: work id %q", s.Name(), attrs["agentwork.work.id"])
		}
		if s.Name() == "invoke_agent researcher" {
			if attrs["agentwork.work.state"] != "completed" || len(s.Events()) != 3 {
				t.Errorf("%s %d: state %q, %d events", s.Name(), k, attrs["agentwork.work.state"], len(s.Events()))
			}
			continue
		}
		if want := fmt.Sprintf("call_%d", k-1); attrs["gen_ai.tool.call.id"] != want {
			t.Errorf("%s of work %d has call id %q, want %q", s.Name(), k, attrs["gen_ai.tool.call.id"], want)
		}
	}
}
