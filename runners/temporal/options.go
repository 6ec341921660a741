package temporal

import (
	"time"

	"github.com/agentwork/agentwork/work"
)

// Defaults of the runner. The limits are the in-process Supervisor's.
const (
	DefaultTaskQueue        = "agentwork"
	DefaultHeartbeatTimeout = 10 * time.Second
	DefaultRPCTimeout       = 10 * time.Second
	DefaultMaxAttempts      = 3 // for a child declared retryable
)

// Option configures an Engine or a Worker.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	taskQueue        string
	maxRunning       int
	maxOutstanding   int
	maxStarts        int
	maxDepth         int
	maxDuration      time.Duration
	maxResultBytes   int
	retain           int
	retainAge        time.Duration // 0: no age bound
	retryable        map[string]bool
	maxAttempts      int
	heartbeatTimeout time.Duration
	rpcTimeout       time.Duration
	pollInterval     time.Duration
	pollsPerRun      int // a waiting job's polls per workflow run (options_wait.go)
	observer         work.Observer
	ops              opsConfig // the deployment view (options_ops.go)
	// The duration and budget options, in the order given, for the
	// Engine's Supervisor (which resolves every Work's budget): they
	// compose as work's options do.
	budget []work.Option
	// err is the first invalid budget option (work.ErrInvalidBudget, as
	// the Engine's Supervisor recorded it): every Start, Call and SetPool
	// returns it.
	err error
}

func newConfig(opts []Option) config {
	c := config{
		taskQueue:        DefaultTaskQueue,
		maxRunning:       work.DefaultMaxRunning,
		maxOutstanding:   work.DefaultMaxOutstanding,
		maxStarts:        work.DefaultMaxStarts,
		maxDepth:         work.DefaultMaxDepth,
		maxDuration:      work.DefaultMaxDuration,
		maxResultBytes:   work.DefaultMaxResultBytes,
		retain:           64,
		retryable:        map[string]bool{},
		maxAttempts:      DefaultMaxAttempts,
		heartbeatTimeout: DefaultHeartbeatTimeout,
		rpcTimeout:       DefaultRPCTimeout,
		pollInterval:     250 * time.Millisecond,
		pollsPerRun:      DefaultPollsPerRun,
		observer:         work.NopObserver{},
		ops:              defaultOps(),
	}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	return c
}

// WithTaskQueue sets the task queue of the runner's workflows (default
// "agentwork"); a target's attempts run on "<queue>.<label>". Coordinators
// and workers of one deployment must agree on it.
func WithTaskQueue(q string) Option {
	return optionFunc(func(c *config) {
		if q != "" {
			c.taskQueue = q
		}
	})
}

// WithMaxRunning sets how many attempts one Worker runs at once, per
// target (default 8). It is a per-process bound: Temporal has no global
// one.
func WithMaxRunning(n int) Option {
	return optionFunc(func(c *config) {
		if n > 0 {
			c.maxRunning = n
		}
	})
}

// WithMaxOutstanding sets the queued + running Work one owner may have,
// across every coordinator process (default 32).
func WithMaxOutstanding(n int) Option {
	return optionFunc(func(c *config) {
		if n > 0 {
			c.maxOutstanding = n
		}
	})
}

// WithMaxStarts sets the Work one owner may start over its lifetime
// (default 64); 0 means no limit.
func WithMaxStarts(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 0 {
			c.maxStarts = n
		}
	})
}

// WithMaxDepth sets the owner nesting limit (default 4), as
// work.WithMaxDepth.
func WithMaxDepth(n int) Option {
	return optionFunc(func(c *config) {
		if n > 0 {
			c.maxDepth = n
		}
	})
}

// WithMaxDuration sets the per-Work deadline from running (default 30
// minutes); 0 means none. Negative values are ignored.
//
// Deprecated: use WithDefaultBudget(work.Budget{MaxDuration: d}) (-1: no
// deadline).
func WithMaxDuration(d time.Duration) Option {
	switch {
	case d > 0:
		return WithDefaultBudget(work.Budget{MaxDuration: d})
	case d == 0:
		return WithDefaultBudget(work.Budget{MaxDuration: -1})
	}
	return optionFunc(func(*config) {})
}

// WithMaxResultBytes sets the output size limit (default 1 MiB, which
// keeps a result well below Temporal's 2 MB payload limit). Values above
// 1.5 MiB are lowered to it.
func WithMaxResultBytes(n int) Option {
	return optionFunc(func(c *config) {
		if n > 0 {
			c.maxResultBytes = min(n, 3<<19)
		}
	})
}

// WithRetention bounds the finished Work each owner keeps visible, as
// work.WithRetention: at most count Works (default 64; values below 1 are
// ignored) and, when age > 0, none finished longer than age ago (default
// 0: no age bound; negative values are ignored). Unfinished Work is never
// evicted.
//
// The owner's registry is workflow state and evicts at deterministic
// points of its history, by workflow time: beyond count as each Work
// finishes, in work.WithRetention's order (results already read first,
// then failed and cancelled Work, unread results last, the oldest
// finished first within each); past age, records go whenever the
// registry applies an update (an admission, a transition record, a result
// read, a detach, a pool change). It sets no timer for the age: between
// updates the Engine's reads (List, Status, Settled, Rows, Result and the
// control methods) hide the records already past the age by the Engine's
// clock (Now), so no reader sees expired Work; a Subscription still
// delivers the notice of Work that expired before its next poll. The age
// travels with each admission: give coordinators' Engines the same
// option.
func WithRetention(count int, age time.Duration) Option {
	return optionFunc(func(c *config) {
		if count > 0 {
			c.retain = count
		}
		if age >= 0 {
			c.retainAge = age
		}
	})
}

// WithRetryable declares the children (by label) whose attempt may be run
// again when the process running it dies: up to WithMaxAttempts attempts.
// Other children are never replayed: their Work fails with class
// worker_lost (their tools may have had side effects).
func WithRetryable(labels ...string) Option {
	return optionFunc(func(c *config) {
		for _, l := range labels {
			c.retryable[l] = true
		}
	})
}

// WithMaxAttempts sets the attempts of a retryable child (default 3).
func WithMaxAttempts(n int) Option {
	return optionFunc(func(c *config) {
		if n > 0 {
			c.maxAttempts = n
		}
	})
}

// WithHeartbeatTimeout sets how long an attempt may go without a
// heartbeat before Temporal declares its worker lost (default 10 s).
// Workers heartbeat at a third of it and at every model boundary, until
// the child returns (a cancelled child included); a cancel reaches a
// running child with the next heartbeat, within about a third of it.
func WithHeartbeatTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d > 0 {
			c.heartbeatTimeout = d
		}
	})
}

// WithRPCTimeout caps each call an Engine method makes to Temporal
// (default 10 s); the method's ctx may end it sooner.
func WithRPCTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d > 0 {
			c.rpcTimeout = d
		}
	})
}

// WithObserver sets the Observer. On an Engine the middleware reports
// through it, and so do the foreground calls, refused starts, result
// reads and the detach of ended Work; on a Worker it gets the lifecycle
// events of the Work whose workflows the Worker runs (see "Telemetry" in
// the package doc). nil is ignored.
func WithObserver(o work.Observer) Option {
	return optionFunc(func(c *config) {
		if o != nil {
			c.observer = o
		}
	})
}

// WithDefaultBudget sets the budget of a child that sets none, as
// work.WithDefaultBudget (its non-zero fields replace the defaults: 50
// turns, 100 tool calls, no token limit, a 30-minute MaxDuration; -1: no
// limit). Its MaxDuration is the one way to set the per-Work deadline from
// running. Budget options compose in order, as work's do. Give coordinators' Engines the same option.
func WithDefaultBudget(b work.Budget) Option {
	return optionFunc(func(c *config) {
		if b.MaxDuration != 0 {
			c.maxDuration = max(b.MaxDuration, 0)
		}
		c.budget = append(c.budget, work.WithDefaultBudget(b))
	})
}

// WithBudgetCeiling caps every child's budget, as work.WithBudgetCeiling.
func WithBudgetCeiling(b work.Budget) Option {
	return optionFunc(func(c *config) { c.budget = append(c.budget, work.WithBudgetCeiling(b)) })
}

// WithPollInterval sets how often a Subscription reads its owner's
// registry for settled Work (default 250 ms).
func WithPollInterval(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d > 0 {
			c.pollInterval = d
		}
	})
}
