package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work/observe"
)

// meter returns the process's meter provider and its Prometheus
// exposition (the names telemetry/promexport exports: this module pins the
// OpenTelemetry exporter the Temporal server builds with, not the root
// module's, so promexport itself does not compile here). With no -metrics
// address the metrics stay in memory.
func (f *opsFlags) meter() (*sdkmetric.MeterProvider, http.Handler, error) {
	if f.metrics == "" {
		return sdkmetric.NewMeterProvider(), nil, nil
	}
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo())
	if err != nil {
		return nil, nil, err
	}
	return sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp)), promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), nil
}

// opsFlags are the operator-facing flags of a worker or coordinator: a
// /metrics and /statusz address, and the speed of the clock its gauges'
// ages run on (the integration test compresses the alerts' durations, as
// the in-process alert drivers do with their fast clocks).
type opsFlags struct {
	metrics  string
	speed    float64
	snapshot time.Duration
}

func (f *opsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.metrics, "metrics", "", "serve /metrics and /statusz on this address (127.0.0.1:port)")
	fs.Float64Var(&f.speed, "clock-speed", 1, "ages in the gauges and the status page run this many times faster")
	fs.DurationVar(&f.snapshot, "snapshot-timeout", 0, "bound of each watched engine's snapshot at a scrape (0: the telemetry default)")
}

// serve starts the Prometheus exposition of the process's Observer and its
// status page on f.metrics, and returns the Observer for the process (the
// ages scaled by f.speed) and a function that stops serving. With no
// address it returns obs unchanged.
func (f *opsFlags) serve(obs *telemetry.Observer, metrics http.Handler) (observe.Observer, func(), error) {
	if f.metrics == "" {
		return obs, func() {}, nil
	}
	l, err := net.Listen("tcp", f.metrics)
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", metrics)
	mux.Handle("/statusz", obs.StatusHandler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "metrics:", err)
		}
	}()
	stop := func() { _ = srv.Shutdown(context.Background()) }
	if f.speed == 1 {
		return obs, stop, nil
	}
	return fastObserver{Observer: obs, speed: f.speed, start: time.Now()}, stop, nil
}

// fastObserver is the telemetry Observer whose watched engines' times run
// speed times faster from start: a Snapshot's time and the live Work's
// times are mapped onto the fast clock, and measured ages multiplied, so
// that an age threshold of minutes is reached in seconds while the
// thresholds stay those shipped.
type fastObserver struct {
	*telemetry.Observer
	speed float64
	start time.Time
}

func (o fastObserver) Watch(w observe.Watched) func() {
	return o.Observer.Watch(&fastWatched{w: w, speed: o.speed, start: o.start})
}

type fastWatched struct {
	w     observe.Watched
	speed float64
	start time.Time
}

func (f *fastWatched) at(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return f.start.Add(time.Duration(float64(t.Sub(f.start)) * f.speed))
}

func (f *fastWatched) Snapshot(ctx context.Context) (observe.Snapshot, error) {
	s, err := f.w.Snapshot(ctx)
	if err != nil {
		return s, err
	}
	s.Time = f.at(s.Time)
	live := make([]observe.LiveWork, len(s.Live))
	for i, lw := range s.Live {
		lw.Created, lw.Started, lw.CancelAt = f.at(lw.Created), f.at(lw.Started), f.at(lw.CancelAt)
		live[i] = lw
	}
	s.Live = live
	counts := make([]observe.TargetCounts, len(s.Counts))
	for i, tc := range s.Counts {
		tc.OldestQueued = time.Duration(float64(tc.OldestQueued) * f.speed)
		counts[i] = tc
	}
	s.Counts = counts
	return s, nil
}
