package work

import "time"

// Default limits. The first four follow the crux reference implementation.
const (
	DefaultMaxRunning     = 8                // Work running at once, across all owners
	DefaultMaxOutstanding = 32               // queued + running Work per owner
	DefaultMaxStarts      = 64               // starts per owner over its lifetime; 0 means no limit
	DefaultMaxDepth       = 4                // owner nesting levels: depth 0 .. 3 may start Work
	DefaultMaxDuration    = 30 * time.Minute // per-Work deadline, from running
	DefaultMaxResultBytes = 1 << 20          // per-Work output size
	DefaultRetainTerminal = 64               // terminal Work kept readable per owner
	MaxResultWait         = 30 * time.Second // the cap on a result wait
	MaxListed             = 50               // entries List returns at most
	MaxRows               = 12               // rows Rows returns at most
)

// Option configures a Supervisor.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	clock          Clock
	observer       Observer
	maxRunning     int
	maxOutstanding int
	maxStarts      int
	maxDepth       int
	maxDuration    time.Duration
	maxResultBytes int
	retainTerminal int
	retainAge      time.Duration
	shutdownGrace  time.Duration
}

func newConfig(opts []Option) config {
	c := config{
		clock:          SystemClock,
		observer:       NopObserver{},
		maxRunning:     DefaultMaxRunning,
		maxOutstanding: DefaultMaxOutstanding,
		maxStarts:      DefaultMaxStarts,
		maxDepth:       DefaultMaxDepth,
		maxDuration:    DefaultMaxDuration,
		maxResultBytes: DefaultMaxResultBytes,
		retainTerminal: DefaultRetainTerminal,
		shutdownGrace:  DefaultShutdownGrace,
	}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	return c
}

// WithClock sets the clock. A nil clock is ignored.
func WithClock(c Clock) Option {
	return optionFunc(func(cfg *config) {
		if c != nil {
			cfg.clock = c
		}
	})
}

// WithObserver sets the observer. A nil observer is ignored.
func WithObserver(o Observer) Option {
	return optionFunc(func(cfg *config) {
		if o != nil {
			cfg.observer = o
		}
	})
}

// WithMaxRunning sets how many Works run at once across all owners
// (default 8). Work beyond it waits queued, FIFO and fair across owners.
// Values below 1 are ignored.
func WithMaxRunning(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 1 {
			c.maxRunning = n
		}
	})
}

// WithMaxOutstanding sets how many Works one owner may have queued or
// running (default 32). Values below 1 are ignored.
func WithMaxOutstanding(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 1 {
			c.maxOutstanding = n
		}
	})
}

// WithMaxStarts sets how many Works one owner may start over its lifetime
// (default 64); 0 means no limit. Negative values are ignored.
func WithMaxStarts(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 0 {
			c.maxStarts = n
		}
	})
}

// WithMaxDepth sets the owner nesting limit (default 4): an owner at depth
// d may start Work (or call a foreground child) only when d < n, so at most
// n levels of children run below a top-level owner. A top-level owner has
// depth 0; a child's own scope is one deeper than its owner. Values below 1
// are ignored.
func WithMaxDepth(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 1 {
			c.maxDepth = n
		}
	})
}

// WithMaxDuration sets the default per-Work deadline, counted from running
// (default 30 minutes); 0 means none. Reaching it cancels the child's
// context, and the Work fails with class deadline_exceeded. Negative values
// are ignored.
func WithMaxDuration(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d >= 0 {
			c.maxDuration = d
		}
	})
}

// WithMaxResultBytes sets the default maximum output size (default 1 MiB);
// 0 means none. A larger output fails the Work with class
// result_too_large and is dropped. Negative values are ignored.
func WithMaxResultBytes(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 0 {
			c.maxResultBytes = n
		}
	})
}

// WithRetention bounds terminal Work kept readable per owner: at most count
// items (default 64, at least 1) and, when age > 0, none finished longer
// than age ago. The oldest finished are evicted first. Eviction is lazy: it
// happens on the owner's next start or operation.
func WithRetention(count int, age time.Duration) Option {
	return optionFunc(func(c *config) {
		if count >= 1 {
			c.retainTerminal = count
		}
		if age >= 0 {
			c.retainAge = age
		}
	})
}

// Limits is the Supervisor's effective configuration, for reporting.
type Limits struct {
	MaxRunning     int
	MaxOutstanding int
	MaxStarts      int
	MaxDepth       int
	MaxDuration    time.Duration
	MaxResultBytes int
	RetainTerminal int
	RetainAge      time.Duration
}
