package telemetry

import (
	"log/slog"
	"reflect"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Option configures an Observer.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
	logger         *slog.Logger
	tracing        bool
	metrics        bool
	snapTimeout    time.Duration
}

// newConfig applies opts over the defaults: the global OTel providers (read
// once, when New runs), a logger that discards everything, tracing and
// metrics on. Nil options are ignored.
func newConfig(opts []Option) config {
	c := config{tracing: true, metrics: true, snapTimeout: DefaultSnapshotTimeout}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	if c.tracerProvider == nil {
		c.tracerProvider = otel.GetTracerProvider()
	}
	if c.meterProvider == nil {
		c.meterProvider = otel.GetMeterProvider()
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// WithTracerProvider sets the TracerProvider spans are created with. The
// default is the global provider (otel.GetTracerProvider) at the time New
// runs. A nil provider (or a typed nil pointer) is ignored.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) {
		if !isNil(tp) {
			c.tracerProvider = tp
		}
	})
}

// WithMeterProvider sets the MeterProvider instruments are created with.
// The default is the global provider (otel.GetMeterProvider) at the time New
// runs. A nil provider (or a typed nil pointer) is ignored.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) {
		if !isNil(mp) {
			c.meterProvider = mp
		}
	})
}

// WithLogger sets the logger that receives one structured line per
// lifecycle event: Debug for transitions and other events, Warn for
// failures (a deadline is a failure with error.type deadline_exceeded). The
// default discards everything: a library does not write logs unless asked,
// so pass slog.Default() (or any logger) to opt in. A nil logger is ignored.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) {
		if l != nil {
			c.logger = l
		}
	})
}

// WithoutTracing turns spans off: Begin returns the caller's context, a
// background Work's execution context carries no span, and lifecycle events
// add no span events. A foreground child still runs under the caller's own
// span, if it has one.
func WithoutTracing() Option {
	return optionFunc(func(c *config) { c.tracing = false })
}

// DefaultSnapshotTimeout bounds each watched engine's Snapshot at a
// collection or a status page when no WithSnapshotTimeout is given.
const DefaultSnapshotTimeout = 5 * time.Second

// WithSnapshotTimeout bounds each watched engine's Snapshot (observe.Watched)
// at a metrics collection and a status page request (default
// DefaultSnapshotTimeout): a durable engine whose service does not answer
// within it counts as unavailable that round (agentwork_engine_available
// 0, the status page says so) instead of holding the scrape. A value <= 0
// is ignored.
func WithSnapshotTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d > 0 {
			c.snapTimeout = d
		}
	})
}

// WithoutMetrics turns metrics off: no instrument is created and no
// callback is registered.
func WithoutMetrics() Option {
	return optionFunc(func(c *config) { c.metrics = false })
}

// isNil reports whether v is nil or a typed nil pointer (such as a nil
// *sdkmetric.MeterProvider), which the provider options ignore.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
