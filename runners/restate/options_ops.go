package restate

import "time"

// WithDeploymentGauges makes this Engine the one that exports the
// deployment's figures: New has the Observer (WithObserver, when it is a
// work.Watcher, as the telemetry Observer is) watch the Engine's Snapshot
// (Work by state and target, each target's oldest queued age, whether a
// deployment serves it) until Close. The Snapshot reads Restate's admin
// API (WithAdmin, required for it). Give it to one coordinator process
// per deployment: the figures are the deployment's, and a second process
// exporting them would make the dashboards count them twice. targets are
// labels to report even while they have no live Work and no registered
// deployment; every target with either is reported anyway.
func WithDeploymentGauges(targets ...string) Option {
	return optionFunc(func(c *config) { c.ops.Gauges(targets...) })
}

// WithSnapshotInterval sets how long the Engine's Snapshot reuses what it
// read from Restate (default 15 s): scrapes and status pages within it
// cost Restate nothing. Values below 1 s are raised to it.
func WithSnapshotInterval(d time.Duration) Option {
	return optionFunc(func(c *config) { c.ops.SetInterval(d) })
}

// WithStatusRows sets how many live Works per target the Engine's
// Snapshot lists, newest first (default 10; the rest are counted in
// LiveOmitted). The rows come from the same refresh at no extra call.
func WithStatusRows(n int) Option { return optionFunc(func(c *config) { c.ops.SetRows(n) }) }
