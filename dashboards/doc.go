// Package dashboards builds the Grafana dashboards that ship with agentwork, as
// code, with the Grafana Foundation SDK.
//
// The generated JSON is committed under grafana/ so that users can import or
// provision it without running Go; `make dashboards` (which runs
// `go run ./cmd/gen` in this module) regenerates it, and a test fails when the
// committed file differs from what [OverviewJSON] produces.
//
// Every panel query and every alert expression in alerts/ is parsed with the
// Prometheus PromQL parser, and every metric it names is checked against the
// metrics the library really exports (the telemetry package's exposition
// golden file), so that a renamed instrument breaks a test here rather than a
// user's dashboard.
//
// This is a separate Go module so that its tooling (the Grafana SDK, the
// Prometheus parser) stays out of the library's go.mod.
package dashboards
