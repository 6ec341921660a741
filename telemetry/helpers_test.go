package telemetry_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/agentwork/agentwork/internal/fakeclock"
	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// harness is an Observer on SDK providers with in-memory readers, a JSON
// log buffer, a manual clock and an in-process engine using all of them.
type harness struct {
	t      *testing.T
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	logs   *syncBuffer
	obs    *telemetry.Observer
	rec    *enginetest.Recorder // sees every event the Observer sees
	clk    *fakeclock.Clock
	s      *work.Engine
	owner  work.Owner
	hook   *eventHook // called with each event after the Observer
}

func newHarness(t *testing.T, opts ...work.Option) *harness {
	t.Helper()
	h := &harness{t: t, spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader(),
		logs: &syncBuffer{}, rec: &enginetest.Recorder{}, clk: fakeclock.New(epoch), owner: work.NewOwner("coordinator"), hook: &eventHook{}}
	h.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(h.spans), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader))
	logger := slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	obs, err := telemetry.New(telemetry.WithTracerProvider(h.tp), telemetry.WithMeterProvider(mp), telemetry.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	h.obs = obs
	opts = append([]work.Option{work.WithObserver(tee{obs, h.rec, h.hook}), work.WithClock(h.clk)}, opts...)
	h.s = work.New(opts...)
	t.Cleanup(func() {
		if err := h.s.Close(context.Background()); err != nil {
			t.Error(err)
		}
		_ = h.tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	return h
}

// tee sends everything to the telemetry Observer and records the events.
// It is a Watcher so that the gauges see the engine.
type tee struct {
	obs  *telemetry.Observer
	rec  *enginetest.Recorder
	hook *eventHook
}

func (t tee) Begin(ctx context.Context, c observe.ToolCall) (context.Context, func(observe.ToolCallEnd)) {
	return t.obs.Begin(ctx, c)
}

func (t tee) Bind(caller, exec context.Context, e observe.Event) context.Context {
	return t.obs.Bind(caller, exec, e)
}

func (t tee) Event(ctx context.Context, e observe.Event) {
	t.rec.Event(ctx, e)
	t.obs.Event(ctx, e)
	t.hook.call(e)
}

func (t tee) Watch(s observe.Watched) func() { return t.obs.Watch(s) }

func (t tee) ShutdownReported(ctx context.Context, r observe.ShutdownReport) {
	t.obs.ShutdownReported(ctx, r)
}

// eventHook is an optional function the harness calls with each event,
// after the Observer saw it (set sets it; nil calls nothing).
type eventHook struct {
	mu sync.Mutex
	f  func(observe.Event)
}

func (k *eventHook) set(f func(observe.Event)) {
	k.mu.Lock()
	k.f = f
	k.mu.Unlock()
}

func (k *eventHook) call(e observe.Event) {
	if k == nil {
		return
	}
	k.mu.Lock()
	f := k.f
	k.mu.Unlock()
	if f != nil {
		f(e)
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// root starts the coordinator's own span (as the user's instrumentation
// would) and returns its context.
func (h *harness) root() (context.Context, trace.Span) {
	return h.tp.Tracer("test").Start(context.Background(), "coordinator")
}

// launch does what the middleware does for run_in_background.
func (h *harness) launch(ctx context.Context, t work.Target, spec work.Spec) (string, error) {
	ctx, end := h.obs.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallLaunch, Tool: t.Label, CallID: "call_launch", Owner: h.owner.ID()})
	spec.Owner, spec.Target = h.owner, t
	ref, err := h.s.Start(ctx, spec)
	if err != nil {
		end(observe.ToolCallEnd{Outcome: "rejected", ErrorClass: "limit_exceeded"})
		return "", err
	}
	end(observe.ToolCallEnd{WorkID: ref.ID, Outcome: "ok"})
	return ref.ID, nil
}

// action does what the work tool does: a call span around fn.
func (h *harness) action(ctx context.Context, action, id string, fn func(ctx context.Context) (outcome, class string)) {
	ctx, end := h.obs.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallAction, Tool: "work", Action: action, WorkID: id, CallID: "call_" + action, Owner: h.owner.ID()})
	outcome, class := fn(ctx)
	end(observe.ToolCallEnd{Outcome: outcome, ErrorClass: class})
}

// await waits until the Work is terminal (a completed Work's result is
// read, which emits result-read). A terminal Result is never ahead of the
// Observer, so its events are recorded by then.
func (h *harness) await(id string, want observe.State) {
	h.t.Helper()
	st, _, err := h.s.Result(context.Background(), h.owner, id, work.MaxResultWait)
	if err != nil || st.State != want {
		h.t.Fatalf("work %s: %v %v, want %s", id, st.State, err, want)
	}
}

var (
	researcher = work.Target{Label: "researcher", Kind: work.KindAgent}
	summarizer = work.Target{Label: "summarizer", Kind: work.KindFunction}
)

var workIDPattern = regexp.MustCompile(`[0-9a-f]{32}`)

// renderSpans renders every ended span, sorted, one block each:
//
//	name kind=internal parent=<name|root> trace=t1 links=[name] status=Error
//	  attrs: k=v ...
//	  event name {k=v ...}
//
// Work ids become <id>; trace ids are numbered in order of first use.
func renderSpans(spans []sdktrace.ReadOnlySpan) string {
	names := map[trace.SpanID]string{}
	for _, s := range spans {
		names[s.SpanContext().SpanID()] = s.Name()
	}
	sorted := slices.Clone(spans)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name() < sorted[j].Name() })
	traces := map[trace.TraceID]string{}
	var b strings.Builder
	for _, s := range sorted {
		tid := s.SpanContext().TraceID()
		if _, ok := traces[tid]; !ok {
			traces[tid] = fmt.Sprintf("t%d", len(traces)+1)
		}
		parent := "root"
		if p := s.Parent(); p.IsValid() {
			parent = names[p.SpanID()]
			if parent == "" {
				parent = "?"
			}
		}
		var links []string
		for _, l := range s.Links() {
			links = append(links, names[l.SpanContext.SpanID()]+attrString(l.Attributes))
		}
		status := s.Status().Code.String()
		if d := s.Status().Description; d != "" {
			status += fmt.Sprintf("(%q)", d)
		}
		fmt.Fprintf(&b, "%s kind=%s parent=%s trace=%s links=%v status=%s\n", s.Name(), s.SpanKind(), parent, traces[tid], links, status)
		fmt.Fprintf(&b, "  attrs%s\n", attrString(s.Attributes()))
		for _, e := range s.Events() {
			fmt.Fprintf(&b, "  event %s%s\n", e.Name, attrString(e.Attributes))
		}
	}
	return workIDPattern.ReplaceAllString(b.String(), "<id>")
}

func attrString(kvs []attribute.KeyValue) string {
	if len(kvs) == 0 {
		return ""
	}
	parts := make([]string, len(kvs))
	for i, kv := range kvs {
		parts[i] = string(kv.Key) + "=" + kv.Value.String()
	}
	sort.Strings(parts)
	return " {" + strings.Join(parts, " ") + "}"
}

// collect reads the metrics.
func (h *harness) collect() metricdata.ResourceMetrics {
	h.t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(context.Background(), &rm); err != nil {
		h.t.Fatal(err)
	}
	return rm
}

// series returns "name{k=v,...} value" for every data point of the
// telemetry scope (histograms as count/sum), sorted.
func series(rm metricdata.ResourceMetrics) []string {
	var out []string
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != telemetry.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					out = append(out, fmt.Sprintf("%s%s %d", m.Name, setString(dp.Attributes), dp.Value))
				}
			case metricdata.Gauge[int64]:
				for _, dp := range d.DataPoints {
					out = append(out, fmt.Sprintf("%s%s %d", m.Name, setString(dp.Attributes), dp.Value))
				}
			case metricdata.Gauge[float64]:
				for _, dp := range d.DataPoints {
					out = append(out, fmt.Sprintf("%s%s %g", m.Name, setString(dp.Attributes), dp.Value))
				}
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					out = append(out, fmt.Sprintf("%s%s count=%d sum=%g", m.Name, setString(dp.Attributes), dp.Count, dp.Sum))
				}
			case metricdata.Histogram[int64]:
				for _, dp := range d.DataPoints {
					out = append(out, fmt.Sprintf("%s%s count=%d sum=%d", m.Name, setString(dp.Attributes), dp.Count, dp.Sum))
				}
			default:
				out = append(out, fmt.Sprintf("%s: unexpected %T", m.Name, m.Data))
			}
		}
	}
	sort.Strings(out)
	return out
}

func setString(s attribute.Set) string {
	if s.Len() == 0 {
		return ""
	}
	var parts []string
	for _, kv := range s.ToSlice() {
		parts = append(parts, string(kv.Key)+"="+kv.Value.String())
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// diff reports the first differing lines of two multi-line strings.
func diff(t *testing.T, what, got, want string) {
	t.Helper()
	if got == want {
		return
	}
	t.Errorf("%s differ:\n--- got\n%s\n--- want\n%s", what, got, want)
}
