package driver

import (
	"context"
	"sync"
	"time"

	"github.com/agentwork/agentwork/work"
)

// Cache is an engine's deployment view (work.Watched's Snapshot), read
// from its server at most once per interval and reused in between, so
// that a scrape never fans out: concurrent callers share one refresh. A
// failed refresh is not reused: the next call tries again. The zero value
// is empty; it is safe for concurrent use.
type Cache struct {
	mu   sync.Mutex // held during a refresh: concurrent callers wait for it
	at   time.Time  // when snap was read; zero: never
	snap work.Snapshot
	err  error
}

// Snapshot returns the cached view if it was read less than interval ago
// without error, else refresh's answer (read under the cache's lock, so
// that what refresh keeps between calls needs no lock of its own).
func (c *Cache) Snapshot(ctx context.Context, interval time.Duration, refresh func(context.Context) (work.Snapshot, error)) (work.Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && c.err == nil && time.Since(c.at) < interval {
		return c.snap, nil
	}
	c.snap, c.err = refresh(ctx)
	c.at = time.Now()
	return c.snap, c.err
}

// Deployment configures an engine's deployment view (its Snapshot): the
// settings of a durable runner's WithDeploymentGauges,
// WithSnapshotInterval and WithStatusRows, with their defaults and their
// meaning of every value written once. The zero value is not the
// default: start from DefaultDeployment.
type Deployment struct {
	Export   bool          // the Engine registers its Snapshot with the Observer (a work.Watcher)
	Targets  []string      // targets reported even with no live Work
	Interval time.Duration // how long a Snapshot is reused
	Rows     int           // live Works listed per target, newest first
}

// DefaultDeployment is the deployment view's default: not exported,
// reused for 15 s, 10 rows per target.
func DefaultDeployment() Deployment {
	return Deployment{Interval: 15 * time.Second, Rows: 10}
}

// Gauges makes the engine export the deployment's figures, reporting
// targets besides every target with live Work.
func (d *Deployment) Gauges(targets ...string) {
	d.Export = true
	d.Targets = append(d.Targets, targets...)
}

// SetInterval sets how long a Snapshot is reused: a positive value, below
// 1 s raised to it; other values leave it unchanged.
func (d *Deployment) SetInterval(v time.Duration) {
	if v > 0 {
		d.Interval = max(v, time.Second)
	}
}

// SetRows sets the live Works listed per target: 0 lists none; a negative
// value leaves it unchanged.
func (d *Deployment) SetRows(n int) {
	if n >= 0 {
		d.Rows = n
	}
}
