package temporal

import "time"

// WithDeploymentGauges makes this Engine the one that exports the
// deployment's figures: New has the Observer (WithObserver, when it is a
// work.Watcher, as the telemetry Observer is) watch the Engine's Snapshot
// (Work by state and target, each target's queued Work and oldest queued
// age, and the workers polling its queue) until Close. Give it to one
// coordinator process per deployment: the figures are the deployment's,
// and a second process exporting them would make the dashboards count them
// twice. targets are labels to report even while they have no live Work
// (a target's queue with no poller shows before its Work waits); every
// target with live Work is reported anyway.
func WithDeploymentGauges(targets ...string) Option {
	return optionFunc(func(c *config) { c.ops.Gauges(targets...) })
}

// WithSnapshotInterval sets how long the Engine's Snapshot reuses what it
// read from Temporal (default 15 s): scrapes and status pages within it
// cost Temporal nothing. Values below 1 s are raised to it.
func WithSnapshotInterval(d time.Duration) Option {
	return optionFunc(func(c *config) { c.ops.SetInterval(d) })
}

// WithStatusRows sets how many live Works per target the Engine's
// Snapshot lists, newest first (default 10; the rest are counted): each
// costs one call to Temporal per refresh.
func WithStatusRows(n int) Option { return optionFunc(func(c *config) { c.ops.SetRows(n) }) }

// WithNamespace names the Temporal namespace of the Engine's client
// (default "default"), for the task queue statistics its Snapshot reads
// (the SDK client does not expose it).
func WithNamespace(ns string) Option {
	return optionFunc(func(c *config) {
		if ns != "" {
			c.namespace = ns
		}
	})
}
