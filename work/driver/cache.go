package driver

import (
	"context"
	"sync"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// Cache is an engine's deployment view (observe.Watched's Snapshot), read
// from its server at most once per interval and reused in between, so
// that a scrape never fans out: concurrent callers share one refresh. A
// failed refresh is not reused: the next call tries again. The zero value
// is empty; it is safe for concurrent use.
type Cache struct {
	mu   sync.Mutex // held during a refresh: concurrent callers wait for it
	at   time.Time  // when snap was read; zero: never
	snap observe.Snapshot
	err  error
}

// Snapshot returns the cached view if it was read less than interval ago
// without error, else refresh's answer (read under the cache's lock, so
// that what refresh keeps between calls needs no lock of its own). With
// refresh nil it returns work.ErrUnavailable (no deployment view), as
// Portable.Snapshot does with no Config.Read.
func (c *Cache) Snapshot(ctx context.Context, interval time.Duration, refresh func(context.Context) (observe.Snapshot, error)) (observe.Snapshot, error) {
	if refresh == nil {
		return observe.Snapshot{}, Detail(work.ErrUnavailable, "no deployment view")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && c.err == nil && time.Since(c.at) < interval {
		return c.snap, nil
	}
	c.snap, c.err = refresh(ctx)
	c.at = time.Now()
	return c.snap, c.err
}
