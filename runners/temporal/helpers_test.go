package temporal_test

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
)

// deploy starts a Worker for targets and an Engine on the shared server,
// on a fresh task queue named after prefix, both with a one-minute RPC
// timeout before workerOpts and engineOpts; the test's end stops them.
func deploy(t *testing.T, prefix string, targets map[string]temporal.Child, workerOpts, engineOpts []temporal.Option) (*work.Engine, string) {
	t.Helper()
	c := server(t)
	eventQueues++
	queue := prefix + "-" + strconv.Itoa(eventQueues)
	base := []temporal.Option{temporal.WithTaskQueue(queue), temporal.WithRPCTimeout(time.Minute)}
	w, err := temporal.NewWorker(c, targets, append(base, workerOpts...)...)
	if err != nil || w.Start() != nil {
		t.Fatal("worker", err)
	}
	t.Cleanup(w.Stop)
	eng := temporal.New(c, append(base, engineOpts...)...)
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	return eng, queue
}

// dialShared dials a client of its own to the shared server (starting it
// if need be) whose calls go through interceptors, in order; the test's
// end closes it.
func dialShared(t *testing.T, interceptors ...grpc.UnaryClientInterceptor) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: sharedServer(t).HostPort, Namespace: namespace(),
		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(interceptors...)}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// observed is the telemetry Observer on SDK providers with in-memory
// readers: spans (on the tracer provider given, or on its own recorder),
// metrics and JSON log lines at debug level.
type observed struct {
	obs    *telemetry.Observer
	spans  *tracetest.SpanRecorder // nil when the caller gave the tracer provider
	reader *sdkmetric.ManualReader
	logs   logBuffer
}

func newObserved(t *testing.T, tp *sdktrace.TracerProvider) *observed {
	t.Helper()
	o := &observed{reader: sdkmetric.NewManualReader()}
	if tp == nil {
		o.spans = tracetest.NewSpanRecorder()
		tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(o.spans))
	}
	obs, err := telemetry.New(telemetry.WithTracerProvider(tp),
		telemetry.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(o.reader))),
		telemetry.WithLogger(slog.New(slog.NewJSONHandler(&o.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = obs.Unregister() })
	o.obs = obs
	return o
}

// logBuffer is a log destination safe for concurrent writes.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
