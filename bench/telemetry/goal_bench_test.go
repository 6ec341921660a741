package telemetrybench

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentwork/agentwork/bench/internal/benchpair"
	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// discard is a span exporter that drops every batch.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// sdk is a tracer provider with the SDK's batch span processor in front of
// a discarding exporter, and a meter provider with a manual reader.
type sdk struct {
	tp     *sdktrace.TracerProvider
	mp     *sdkmetric.MeterProvider
	reader *sdkmetric.ManualReader
}

func newSDK() *sdk {
	s := &sdk{reader: sdkmetric.NewManualReader()}
	s.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	s.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(s.reader))
	return s
}

func (s *sdk) collect() {
	var rm metricdata.ResourceMetrics
	_ = s.reader.Collect(context.Background(), &rm)
}

func (s *sdk) shutdown() {
	_ = s.tp.Shutdown(context.Background())
	_ = s.mp.Shutdown(context.Background())
}

// lifecycle runs one background lifecycle as the middleware drives it (see
// benchLifecycle) through obs.
type lifecycle struct {
	s     *work.Engine
	obs   observe.Observer
	owner work.Owner
	spec  work.Spec
}

func newLifecycle(obs observe.Observer) *lifecycle {
	owner := work.NewOwner("bench")
	return &lifecycle{s: work.New(work.WithObserver(obs), work.WithMaxStarts(0)), obs: obs, owner: owner,
		spec: work.Spec{Owner: owner, Target: researcher, Run: func(context.Context) (string, error) {
			return "a short result", nil
		}}}
}

func (l *lifecycle) run(b *testing.B) {
	ctx := context.Background()
	lctx, end := l.obs.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallLaunch, Tool: "researcher", CallID: "call_1", Owner: l.owner.ID()})
	ref, err := l.s.Start(lctx, l.spec)
	if err != nil {
		b.Fatal(err)
	}
	end(observe.ToolCallEnd{WorkID: ref.ID, Outcome: "ok"})
	actx, end := l.obs.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallAction, Tool: "work", Action: "result", WorkID: ref.ID, CallID: "call_2", Owner: l.owner.ID()})
	st, _, err := l.s.Result(actx, l.owner, ref.ID, work.MaxResultWait)
	if err != nil || st.State != work.StateCompleted {
		b.Fatal(st.State, err)
	}
	end(observe.ToolCallEnd{Outcome: "ok"})
}

// floor makes, directly with the SDK and no agentwork code, the spans,
// span events, links and metric records one lifecycle produces: the
// launch's execute_tool span, the Work's invoke_agent root span (linked
// both ways) with its queued, running and completed events, its state
// attribute as it starts and as it ends and its provider name, the result action's execute_tool work span with the
// result-read event, three transition counts, the queue wait, result size
// and duration histograms and the action count. Metric attribute sets are
// precomputed, as the SDK recommends.
type floor struct {
	tr                          trace.Tracer
	transitions, actions        metric.Int64Counter
	queueWait, duration         metric.Float64Histogram
	resultBytes                 metric.Int64Histogram
	queued, running, completed  metric.AddOption
	target, outcome, actionOK   metric.MeasurementOption
	opTool, opAgent, toolType   attribute.KeyValue
	name, target2, callID       attribute.KeyValue
	workTool, actionResult, id  attribute.KeyValue
	stQueued, stRunning, stDone attribute.KeyValue
	provider                    attribute.KeyValue
}

func newFloor(s *sdk) *floor {
	m := s.mp.Meter("floor")
	f := &floor{tr: s.tp.Tracer("floor")}
	f.transitions, _ = m.Int64Counter("agentwork_work_transitions")
	f.actions, _ = m.Int64Counter("agentwork_work_actions")
	f.queueWait, _ = m.Float64Histogram("agentwork_work_queue_wait")
	f.duration, _ = m.Float64Histogram("agentwork_work_duration")
	f.resultBytes, _ = m.Int64Histogram("agentwork_work_result_bytes")
	tgt := attribute.String("target", "researcher")
	f.queued = metric.WithAttributeSet(attribute.NewSet(attribute.String("state", "queued"), tgt))
	f.running = metric.WithAttributeSet(attribute.NewSet(attribute.String("state", "running"), tgt))
	f.completed = metric.WithAttributeSet(attribute.NewSet(attribute.String("state", "completed"), tgt))
	f.target = metric.WithAttributeSet(attribute.NewSet(tgt))
	f.outcome = metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", "completed"), tgt))
	f.actionOK = metric.WithAttributeSet(attribute.NewSet(attribute.String("action", "result"), attribute.String("outcome", "ok")))
	f.opTool, f.opAgent = attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.operation.name", "invoke_agent")
	f.toolType, f.name = attribute.String("gen_ai.tool.type", "function"), attribute.String("gen_ai.tool.name", "researcher")
	f.target2, f.callID = attribute.String("agentwork.work.target", "researcher"), attribute.String("gen_ai.tool.call.id", "call_1")
	f.workTool, f.actionResult = attribute.String("gen_ai.tool.name", "work"), attribute.String("agentwork.action", "result")
	f.id = attribute.String("agentwork.work.id", "0123456789abcdef0123456789abcdef")
	st := attribute.Key("agentwork.work.state")
	f.stQueued, f.stRunning, f.stDone = st.String("queued"), st.String("running"), st.String("completed")
	f.provider = attribute.String("gen_ai.provider.name", "_OTHER")
	return f
}

func (f *floor) run() {
	ctx := context.Background()
	internal := trace.WithSpanKind(trace.SpanKindInternal)
	lctx, launch := f.tr.Start(ctx, "execute_tool researcher", internal,
		trace.WithAttributes(f.opTool, f.toolType, f.name, f.target2, f.callID))
	_, agent := f.tr.Start(context.Background(), "invoke_agent researcher", trace.WithNewRoot(), internal,
		trace.WithAttributes(f.opAgent, attribute.String("gen_ai.agent.name", "researcher"), f.id, f.target2, f.stQueued, f.provider),
		trace.WithLinks(trace.Link{SpanContext: launch.SpanContext()}))
	launch.AddLink(trace.Link{SpanContext: agent.SpanContext()})
	agent.AddEvent("agentwork.work.queued", trace.WithAttributes(f.stQueued))
	f.transitions.Add(lctx, 1, f.queued)
	launch.SetAttributes(f.id)
	launch.End()
	actx, action := f.tr.Start(ctx, "execute_tool work", internal,
		trace.WithAttributes(f.opTool, f.toolType, f.workTool, f.actionResult, f.id, f.callID))
	agent.AddEvent("agentwork.work.running", trace.WithAttributes(f.stRunning))
	f.transitions.Add(ctx, 1, f.running)
	f.queueWait.Record(ctx, 1e-6, f.target)
	agent.AddEvent("agentwork.work.completed", trace.WithAttributes(f.stDone, attribute.Int("agentwork.result.bytes", 14)))
	agent.SetAttributes(f.stDone)
	f.transitions.Add(ctx, 1, f.completed)
	f.resultBytes.Record(ctx, 14, f.target)
	f.duration.Record(ctx, 1e-6, f.outcome)
	agent.End()
	action.AddEvent("agentwork.work.result.read", trace.WithAttributes(attribute.Int("agentwork.result.bytes", 14)))
	action.End()
	f.actions.Add(actx, 1, f.actionOK)
}

// BenchmarkGoalTelemetry compares, in one run, the lifecycle with the
// no-op Observer, the same lifecycle with the telemetry Observer on the
// SDK (batch span processor, discarding exporter, manual metric reader
// collected between chunks) and the SDK floor. x-floor is the Observer's
// overhead over the no-op lifecycle divided by the floor's cost;
// added-allocs/op is its allocations beyond the engine's own.
func BenchmarkGoalTelemetry(b *testing.B) {
	nop := newLifecycle(observe.NopObserver{})
	defer nop.s.Close(context.Background())
	osdk, fsdk := newSDK(), newSDK()
	defer osdk.shutdown()
	defer fsdk.shutdown()
	obs, err := telemetry.New(telemetry.WithTracerProvider(osdk.tp), telemetry.WithMeterProvider(osdk.mp))
	if err != nil {
		b.Fatal(err)
	}
	tel := newLifecycle(obs)
	defer tel.s.Close(context.Background())
	fl := newFloor(fsdk)
	b.ReportAllocs()
	r := benchpair.Run(b, 256,
		benchpair.Arm{Name: "nop", Run: func(n int) func() {
			for range n {
				nop.run(b)
			}
			return nil
		}},
		benchpair.Arm{Name: "otel", Run: func(n int) func() {
			for range n {
				tel.run(b)
			}
			return osdk.collect
		}},
		benchpair.Arm{Name: "floor", Run: func(n int) func() {
			for range n {
				fl.run()
			}
			return fsdk.collect
		}},
	)
	b.ReportMetric((r[1].NsPerOp-r[0].NsPerOp)/r[2].NsPerOp, "x-floor")
	b.ReportMetric(r[1].AllocsPerOp-r[0].AllocsPerOp, "added-allocs/op")
}

var researcher = work.Target{Label: "researcher", Kind: work.KindAgent}
