// Package promexport exposes the telemetry package's metrics to Prometheus
// in one call: New returns an OTel SDK MeterProvider wired to the OTel
// Prometheus exporter, registered on a new client_golang Registry (never the
// default registry unless the caller passes it with WithRegisterer), and an
// http.Handler serving it.
//
//	exp, err := promexport.New()
//	...
//	obs, err := telemetry.New(telemetry.WithMeterProvider(exp.MeterProvider()))
//	...
//	http.Handle("/metrics", exp.Handler())
//	defer exp.Shutdown(ctx)
//
// The exporter's name translation is set explicitly to
// otlptranslator.UnderscoreEscapingWithSuffixes, with scope labels and
// target_info turned off, so the scraped names are exactly the ones in the
// telemetry package documentation (agentwork_work_items,
// agentwork_work_transitions_total, agentwork_work_duration_seconds, ...);
// testdata/scenario.golden pins them. This package imports the OTel SDK; the
// telemetry package itself does not.
package promexport
