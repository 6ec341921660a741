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

	DefaultMaxMessageBytes        = 16 << 10 // per guidance message
	DefaultMaxQueuedGuidance      = 32       // undelivered guidance messages per Work
	DefaultMaxQueuedGuidanceBytes = 64 << 10 // undelivered guidance bytes per Work
	DefaultMaxCommandRecords      = 256      // idempotency records per Work
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
	budget         budgetConfig
	// guidance and command records (Send)
	maxMessageBytes int
	maxQueued       int
	maxQueuedBytes  int
	maxCommands     int
	// err is the first invalid option value (ErrInvalidBudget), returned
	// by every Start, Call and SetPool.
	err error
}

func newConfig(opts []Option) config {
	c := config{
		clock:          systemClock{},
		observer:       NopObserver{},
		maxRunning:     DefaultMaxRunning,
		maxOutstanding: DefaultMaxOutstanding,
		maxStarts:      DefaultMaxStarts,
		maxDepth:       DefaultMaxDepth,
		maxDuration:    DefaultMaxDuration,
		maxResultBytes: DefaultMaxResultBytes,
		retainTerminal: DefaultRetainTerminal,
		shutdownGrace:  DefaultShutdownGrace,
		budget:         defaultBudgetConfig(),

		maxMessageBytes: DefaultMaxMessageBytes,
		maxQueued:       DefaultMaxQueuedGuidance,
		maxQueuedBytes:  DefaultMaxQueuedGuidanceBytes,
		maxCommands:     DefaultMaxCommandRecords,
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
// (default 8). Work beyond it waits queued, FIFO and fair across owners. A
// child waiting in Result on its own descendants lends its slot to them
// (see "Running slots" in the package doc). Values below 1 are ignored.
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

// WithMaxDuration sets the per-Work deadline, counted from running
// (default 30 minutes); 0 means none. Negative values are ignored. It is
// WithDefaultBudget(Budget{MaxDuration: d}), with 0 spelled -1 there.
//
// Deprecated: use WithDefaultBudget(Budget{MaxDuration: d}) (-1: no
// deadline).
func WithMaxDuration(d time.Duration) Option {
	switch {
	case d > 0:
		return WithDefaultBudget(Budget{MaxDuration: d})
	case d == 0:
		return WithDefaultBudget(Budget{MaxDuration: -1})
	}
	return optionFunc(func(*config) {})
}

// WithMaxResultBytes sets the maximum output size (default 1 MiB); 0 means
// none. A larger output fails the Work with class result_too_large and is
// dropped (a foreground Call: ErrChildFailed with that class). It is also the ceiling of Spec.MaxResultBytes, which can only
// lower it. Negative values are ignored.
func WithMaxResultBytes(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 0 {
			c.maxResultBytes = n
		}
	})
}

// WithRetention bounds terminal Work kept readable per owner: at most count
// items (default 64, at least 1) and, when age > 0, none finished longer
// than age ago. Work past the age bound is evicted first. Beyond the count
// bound the engine evicts, in this order, results already read, then
// failed and cancelled Work, and unread completed results last; within
// each group the oldest finished first. Unfinished Work is never evicted.
// Eviction is lazy: it happens on the owner's next start or operation, and
// as Work finishes.
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

// WithMaxMessageBytes sets the largest guidance message Send accepts
// (default 16 KiB); larger ones are ErrMessageTooLarge. Values below 1 are
// ignored.
func WithMaxMessageBytes(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 1 {
			c.maxMessageBytes = n
		}
	})
}

// WithGuidanceQueue bounds the accepted, undelivered guidance of one Work:
// at most count messages (default 32) and bytes bytes in all (default
// 64 KiB). A Send beyond either is ErrMailboxFull until the child drains
// its mailbox. Values below 1 are ignored, each on its own.
func WithGuidanceQueue(count, bytes int) Option {
	return optionFunc(func(c *config) {
		if count >= 1 {
			c.maxQueued = count
		}
		if bytes >= 1 {
			c.maxQueuedBytes = bytes
		}
	})
}

// WithCommandRecords sets how many idempotency records (one per accepted
// Send with a command id) one Work keeps (default 256); beyond it the
// oldest is dropped, and a replay of a dropped command is treated as a new
// command. Values below 1 are ignored.
func WithCommandRecords(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 1 {
			c.maxCommands = n
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

	MaxMessageBytes        int
	MaxQueuedGuidance      int
	MaxQueuedGuidanceBytes int
	MaxCommandRecords      int
}
