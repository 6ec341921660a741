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
	taskQueue string
	// opts holds the limit and budget options in the order given, as
	// work's own options: work.ResolveLimits interprets them into limits
	// (and err), so that every value means here what it means to the
	// in-process Supervisor; newConfig then lowers the result bound to
	// maxResultPayload.
	opts             []work.Option
	limits           work.Limits
	retryable        map[string]bool
	maxAttempts      int
	heartbeatTimeout time.Duration
	rpcTimeout       time.Duration
	pollInterval     time.Duration
	pollsPerRun      int // a waiting job's polls per workflow run (options_wait.go)
	observer         work.Observer
	ops              opsConfig // the deployment view (options_ops.go)
	// err is the first invalid limit or budget option
	// (work.ErrInvalidLimit, work.ErrInvalidBudget): every Start, Call and
	// SetPool of the Engine, and NewWorker, return it.
	err error
}

// maxResultPayload is the largest output a Work may have on this runner
// (1.5 MiB, well below Temporal's 2 MB payload limit): a larger
// WithMaxResultBytes, and 0 (no limit of the Engine's own), are lowered
// to it.
const maxResultPayload = 3 << 19

func newConfig(opts []Option) config {
	c := config{
		taskQueue:        DefaultTaskQueue,
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
	c.limits, c.err = work.ResolveLimits(c.opts...)
	if c.limits.MaxResultBytes == 0 || c.limits.MaxResultBytes > maxResultPayload {
		c.limits.MaxResultBytes = maxResultPayload
	}
	return c
}

// limit is an Option that is work's option o.
func limit(o work.Option) Option {
	return optionFunc(func(c *config) { c.opts = append(c.opts, o) })
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

// The limit options are work's options of the same names, with the same
// meaning of every value, 0 and negative included (a negative value makes
// every Start, Call and SetPool of the Engine, and NewWorker, fail with
// work.ErrInvalidLimit). Coordinators' Engines and Workers of one
// deployment should be given the same ones.

// WithMaxRunning sets how many attempts one Worker runs at once, per
// target, as work.WithMaxRunning (0: the default, 8). It is a per-process
// bound: Temporal has no global one.
func WithMaxRunning(n int) Option { return limit(work.WithMaxRunning(n)) }

// WithMaxOutstanding sets the queued + running Work one owner may have,
// across every coordinator process, as work.WithMaxOutstanding (0: the
// default, 32).
func WithMaxOutstanding(n int) Option { return limit(work.WithMaxOutstanding(n)) }

// WithMaxStarts sets the Work one owner may start over its lifetime, as
// work.WithMaxStarts (0: no limit).
func WithMaxStarts(n int) Option { return limit(work.WithMaxStarts(n)) }

// WithMaxDepth sets the owner nesting limit, as work.WithMaxDepth (0: the
// default, 4).
func WithMaxDepth(n int) Option { return limit(work.WithMaxDepth(n)) }

// WithMaxResultBytes sets the output size limit, as
// work.WithMaxResultBytes (default 1 MiB; 0: no limit of the Engine's
// own), within this runner's bound: an output never exceeds 1.5 MiB here,
// well below Temporal's 2 MB payload limit (a larger n, and 0, mean
// 1.5 MiB). A Spec's MaxResultBytes lowers it for its Work.
func WithMaxResultBytes(n int) Option { return limit(work.WithMaxResultBytes(n)) }

// WithRetention bounds the finished Work each owner keeps visible, as
// work.WithRetention: at most count Works (0: the default, 64) and, when
// age > 0, none finished longer than age ago (0: no age bound).
// Unfinished Work is never evicted.
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
	return limit(work.WithRetention(count, age))
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
// running. Budget options compose in order, as work's do. Give
// coordinators' Engines the same option.
func WithDefaultBudget(b work.Budget) Option { return limit(work.WithDefaultBudget(b)) }

// WithBudgetCeiling caps every child's budget, as work.WithBudgetCeiling.
func WithBudgetCeiling(b work.Budget) Option { return limit(work.WithBudgetCeiling(b)) }

// WithPollInterval sets how often a Subscription reads its owner's
// registry for settled Work (default 250 ms).
func WithPollInterval(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d > 0 {
			c.pollInterval = d
		}
	})
}
