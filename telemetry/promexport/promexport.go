package promexport

import (
	"context"
	"errors"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
)

// Option configures an Exporter.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	registerer prometheus.Registerer
	resource   *resource.Resource
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	return c
}

// WithRegisterer also registers the exporter's collector on reg, so that
// the agentwork metrics appear in an endpoint the application already
// serves. Pass prometheus.DefaultRegisterer to use the default registry:
// the Exporter never touches it otherwise. A nil reg is ignored.
func WithRegisterer(reg prometheus.Registerer) Option {
	return optionFunc(func(c *config) {
		if reg != nil {
			c.registerer = reg
		}
	})
}

// WithTargetInfo sets the MeterProvider's resource and exports it as the
// target_info metric. Without it the provider has the SDK's default
// resource and no target_info is exported (Prometheus's own job and
// instance labels identify the process). A nil res is ignored.
func WithTargetInfo(res *resource.Resource) Option {
	return optionFunc(func(c *config) {
		if res != nil {
			c.resource = res
		}
	})
}

// Exporter is an OTel SDK MeterProvider whose metrics are exposed in the
// Prometheus text format through a client_golang Registry of its own. Create
// one with New; its methods are safe for concurrent use.
type Exporter struct {
	provider *sdkmetric.MeterProvider
	registry *prometheus.Registry
	handler  http.Handler
}

// New returns an Exporter: an SDK MeterProvider with the OTel Prometheus
// exporter as its reader, registered on a new prometheus.Registry (and on
// the WithRegisterer registerer, if given). The exporter is configured
// explicitly:
//
//   - otlptranslator.UnderscoreEscapingWithSuffixes: dots become
//     underscores, unit suffixes (_seconds, _bytes) and _total on
//     counters are added, so the telemetry package's instruments are
//     scraped as agentwork_work_items, agentwork_work_duration_seconds,
//     agentwork_work_transitions_total and so on;
//   - WithoutScopeInfo: no otel_scope_* labels on every series (the names
//     are namespaced already);
//   - WithoutTargetInfo, unless WithTargetInfo is given.
//
// It fails when a registerer refuses the collector.
func New(opts ...Option) (*Exporter, error) {
	cfg := newConfig(opts)
	reg := prometheus.NewRegistry()
	eopts := []otelprom.Option{
		otelprom.WithRegisterer(tee{own: reg, also: cfg.registerer}),
		otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes),
		otelprom.WithoutScopeInfo(),
	}
	var popts []sdkmetric.Option
	if cfg.resource != nil {
		popts = append(popts, sdkmetric.WithResource(cfg.resource))
	} else {
		eopts = append(eopts, otelprom.WithoutTargetInfo())
	}
	exp, err := otelprom.New(eopts...)
	if err != nil {
		return nil, err
	}
	popts = append(popts, sdkmetric.WithReader(exp))
	return &Exporter{
		provider: sdkmetric.NewMeterProvider(popts...),
		registry: reg,
		handler:  promhttp.HandlerFor(reg, promhttp.HandlerOpts{}),
	}, nil
}

// MeterProvider returns the provider to pass to telemetry.WithMeterProvider
// (and to any other instrumentation whose metrics should be scraped here).
// It is nil for an Exporter not made by New (zero or nil), which
// telemetry.WithMeterProvider ignores.
func (e *Exporter) MeterProvider() *sdkmetric.MeterProvider {
	if e == nil {
		return nil
	}
	return e.provider
}

// Registry returns the Exporter's own registry: it holds the exporter's
// collector and nothing else unless the caller registers more. It is nil
// for an Exporter not made by New (zero or nil).
func (e *Exporter) Registry() *prometheus.Registry {
	if e == nil {
		return nil
	}
	return e.registry
}

// Handler serves the Registry in the Prometheus exposition format. An
// Exporter not made by New (zero or nil) serves an empty exposition.
func (e *Exporter) Handler() http.Handler {
	if e == nil || e.handler == nil {
		return http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	}
	return e.handler
}

// Shutdown shuts the MeterProvider down: later scrapes return no agentwork
// metrics. It is safe to call more than once. On an Exporter not made by
// New (zero or nil) it does nothing.
func (e *Exporter) Shutdown(ctx context.Context) error {
	if e == nil || e.provider == nil {
		return nil
	}
	if err := e.provider.Shutdown(ctx); err != nil && !errors.Is(err, sdkmetric.ErrReaderShutdown) {
		return err
	}
	return nil
}

// tee registers a collector on the Exporter's own registry and on the
// caller's registerer, if any.
type tee struct {
	own  *prometheus.Registry
	also prometheus.Registerer
}

func (t tee) Register(c prometheus.Collector) error {
	if err := t.own.Register(c); err != nil {
		return err
	}
	if t.also != nil {
		if err := t.also.Register(c); err != nil {
			t.own.Unregister(c)
			return err
		}
	}
	return nil
}

func (t tee) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := t.Register(c); err != nil {
			panic(err)
		}
	}
}

func (t tee) Unregister(c prometheus.Collector) bool {
	ok := t.own.Unregister(c)
	if t.also != nil {
		ok = t.also.Unregister(c) || ok
	}
	return ok
}
