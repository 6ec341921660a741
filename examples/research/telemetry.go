package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/telemetry/promexport"
)

// serviceName is the demo's OTel service name unless OTEL_SERVICE_NAME
// says otherwise.
const serviceName = "agentwork-research"

// demoEnvironment is the demo's deployment.environment.name (exported to
// Prometheus as target_info{deployment_environment_name="demo"}): the alert
// rules do not page for a demo environment, whose fetch_dataset target
// always fails on purpose.
const demoEnvironment = "demo"

// serviceVersion is the main module's version ("(devel)" when built from a
// checkout).
func serviceVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// newInstanceID returns a random UUID (version 4) naming this process.
func newInstanceID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// ProviderName forwards the inner model's provider name (the adapter reads
// it for gen_ai.provider.name).
func (p *printingModel) ProviderName() string { return lc.ProviderName(p.inner) }

// telemetrySetup is the demo's observability: an SDK tracer provider
// (recording in memory for the summary, and exporting by OTLP/HTTP when
// OTEL_EXPORTER_OTLP_ENDPOINT is set), the Prometheus exporter, and slog to
// stderr (level from AGENTWORK_LOG: debug, info, warn; default warn).
type telemetrySetup struct {
	observer *telemetry.Observer
	tp       *sdktrace.TracerProvider
	spans    *tracetest.SpanRecorder
	metrics  *promexport.Exporter
	res      *resource.Resource
	addr     string
	logger   *slog.Logger
}

func setupTelemetry(ctx context.Context, cfg config) (*telemetrySetup, error) {
	// service.name, service.version and service.instance.id identify this
	// process in traces and (through target_info) in Prometheus;
	// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override them.
	res, err := resource.New(ctx, resource.WithAttributes(
		semconv.ServiceName(serviceName),
		semconv.ServiceVersion(serviceVersion()),
		semconv.ServiceInstanceID(newInstanceID()),
		semconv.DeploymentEnvironmentName(demoEnvironment),
	), resource.WithFromEnv())
	if err != nil {
		return nil, err
	}
	t := &telemetrySetup{spans: tracetest.NewSpanRecorder(), addr: cfg.metricsAddr}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res), sdktrace.WithSpanProcessor(t.spans)}
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("otlp exporter: %w", err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	t.tp = sdktrace.NewTracerProvider(opts...)
	t.res = res
	if t.metrics, err = promexport.New(promexport.WithTargetInfo(res)); err != nil {
		return nil, err
	}
	level := slog.LevelWarn
	_ = level.UnmarshalText([]byte(os.Getenv("AGENTWORK_LOG")))
	logOut := cfg.logOutput
	if logOut == nil {
		logOut = os.Stderr
	}
	logger := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: level}))
	t.logger = logger
	t.observer, err = telemetry.New(
		telemetry.WithTracerProvider(t.tp),
		telemetry.WithMeterProvider(t.metrics.MeterProvider()),
		telemetry.WithLogger(logger),
	)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// startRun opens the demo run's own root span, the parent of the
// coordinator's tool calls.
func (t *telemetrySetup) startRun(ctx context.Context) (context.Context, func()) {
	ctx, span := t.tp.Tracer("agentwork-demo").Start(ctx, "research.run", trace.WithSpanKind(trace.SpanKindInternal))
	return ctx, func() { span.End() }
}

// summary prints what the run produced: spans by name with their events,
// and every agentwork metric series. It prints names, counts and numbers
// only (there is nothing else to print: telemetry carries no content).
func (t *telemetrySetup) summary(w io.Writer) {
	_ = t.tp.ForceFlush(context.Background())
	counts := map[string]int{}
	events := map[string]int{}
	links := 0
	for _, s := range t.spans.Ended() {
		counts[s.Name()]++
		links += len(s.Links())
		for _, e := range s.Events() {
			events[e.Name]++
		}
	}
	fmt.Fprintf(w, "\n== telemetry: spans ==\n")
	for _, name := range sortedKeys(counts) {
		fmt.Fprintf(w, "%3d  %s\n", counts[name], name)
	}
	fmt.Fprintf(w, "span links (launch <-> invoke_agent, both ways): %d\nspan events:", links)
	for _, name := range sortedKeys(events) {
		fmt.Fprintf(w, " %s=%d", name, events[name])
	}
	fmt.Fprintf(w, "\n\n== telemetry: metrics ==\n")
	families, err := t.metrics.Registry().Gather()
	if err != nil {
		fmt.Fprintf(w, "gather: %v\n", err)
		return
	}
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "agentwork_") {
			continue
		}
		var parts []string
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			v := ""
			switch {
			case m.GetCounter() != nil:
				v = fmt.Sprint(m.GetCounter().GetValue())
			case m.GetGauge() != nil:
				v = fmt.Sprint(m.GetGauge().GetValue())
			case m.GetHistogram() != nil:
				v = fmt.Sprintf("n=%d", m.GetHistogram().GetSampleCount())
			}
			if v == "0" {
				continue
			}
			parts = append(parts, "{"+strings.Join(labels, ",")+"} "+v)
		}
		fmt.Fprintf(w, "%s\n", f.GetName())
		for _, p := range parts {
			fmt.Fprintf(w, "    %s\n", p)
		}
	}
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// serve starts serving /metrics and the live status page /statusz (HTML;
// /statusz?format=json for JSON) on the -metrics-addr address (host
// 127.0.0.1 when omitted) and returns the function that stops it. Without
// the flag it does nothing.
func (t *telemetrySetup) serve(w io.Writer) (stop func(), err error) {
	if t.addr == "" {
		return func() {}, nil
	}
	addr := t.addr
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", t.metrics.Handler())
	mux.Handle("/statusz", t.observer.StatusHandler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	fmt.Fprintf(w, "serving Prometheus metrics on http://%s/metrics\n", ln.Addr())
	fmt.Fprintf(w, "serving the live status page on http://%s/statusz\n\n", ln.Addr())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln) // returns http.ErrServerClosed after Shutdown
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}, nil
}

func (t *telemetrySetup) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = t.tp.Shutdown(ctx)
	_ = t.metrics.Shutdown(ctx)
	_ = t.observer.Unregister()
}
