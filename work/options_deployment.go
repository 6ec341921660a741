package work

import (
	"slices"
	"time"
)

// The deployment view's defaults (WithSnapshotInterval, WithStatusRows).
const (
	defaultSnapshotInterval = 15 * time.Second
	defaultStatusRows       = 10
)

// WithDeploymentGauges makes a durable engine (runners/temporal,
// runners/restate) the one that exports its deployment's figures: it has
// its Observer, when that is an observe.Watcher (as the telemetry Observer is),
// watch the engine's Snapshot (Work by state and target, each target's
// oldest queued age and the workers serving it) until Close. Give it to
// one coordinator process per deployment: the figures are the
// deployment's, and a second process exporting them would make the
// dashboards count them twice. targets are labels to report even while
// they have no live Work, on every engine; every target with live Work is
// reported anyway. The in-process engine's figures are its own process's:
// it exports them to an observe.Watcher whether or not it has this option.
func WithDeploymentGauges(targets ...string) Option {
	return optionFunc(func(c *config) {
		c.deployment = true
		for _, t := range targets {
			if !slices.Contains(c.deploymentTargets, t) {
				c.deploymentTargets = append(c.deploymentTargets, t)
			}
		}
	})
}

// WithSnapshotInterval sets how long a durable engine's Snapshot reuses
// what it read from its service (0: the default, 15 s), so that scrapes
// and status pages within it cost the service nothing. A positive value
// below 1 s is raised to it; negative: invalid, as a limit option's. The
// in-process engine reads its own memory at each Snapshot: the interval
// changes nothing there.
func WithSnapshotInterval(d time.Duration) Option {
	return optionFunc(func(c *config) {
		setLimit(c, "WithSnapshotInterval", d, &c.snapshotInterval, defaultSnapshotInterval)
		c.snapshotInterval = max(c.snapshotInterval, time.Second)
	})
}

// WithStatusRows sets how many live Works per target a durable engine's
// Snapshot lists, newest first (default 10; 0 lists none); the rest are
// counted in observe.Snapshot.LiveOmitted. Negative: invalid, as a limit
// option's. The in-process engine's Snapshot lists every live Work: the
// option changes nothing there.
func WithStatusRows(n int) Option {
	return optionFunc(func(c *config) { setLimit(c, "WithStatusRows", n, &c.statusRows, 0) })
}
