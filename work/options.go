package work

import (
	"time"

	"github.com/agentwork/agentwork/work/internal/limit"
	"github.com/agentwork/agentwork/work/internal/seam"
	"github.com/agentwork/agentwork/work/observe"
)

// Default limits. The first four follow the crux reference implementation.
const (
	defaultMaxRunning     = 8                // Work running at once, across all owners
	defaultMaxOutstanding = 32               // queued + running Work per owner
	defaultMaxStarts      = 64               // starts per owner over its lifetime
	defaultMaxDepth       = 4                // owner nesting levels: depth 0 .. 3 may start Work
	defaultMaxDuration    = 30 * time.Minute // per-Work deadline, from running
	defaultMaxResultBytes = 1 << 20          // per-Work output size
	defaultRetainTerminal = 64               // terminal Work kept readable per owner
	MaxResultWait         = 30 * time.Second // the cap on a result wait

	defaultMaxMessageBytes        = 16 << 10 // per guidance message
	defaultMaxQueuedGuidance      = 32       // undelivered guidance messages per Work
	defaultMaxQueuedGuidanceBytes = 64 << 10 // undelivered guidance bytes per Work
	defaultMaxCommandRecords      = 256      // idempotency records per Work
)

// Option configures an Engine: New's, and a durable runner's through its
// WithOptions (which lists the options it takes).
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	clock          Clock
	observer       observe.Observer
	maxRunning     int
	maxOutstanding int
	maxStarts      int
	maxDepth       int
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
	// the deployment view (options_deployment.go)
	deployment        bool
	deploymentTargets []string
	snapshotInterval  time.Duration
	statusRows        int
	// err is the first invalid option value (ErrInvalidLimit,
	// ErrInvalidBudget), returned by every Start, Call and SetPool.
	err error
}

func newConfig(opts []Option) config {
	c := config{
		clock:          systemClock{},
		observer:       observe.NopObserver{},
		maxRunning:     defaultMaxRunning,
		maxOutstanding: defaultMaxOutstanding,
		maxStarts:      defaultMaxStarts,
		maxDepth:       defaultMaxDepth,
		maxResultBytes: defaultMaxResultBytes,
		retainTerminal: defaultRetainTerminal,
		shutdownGrace:  defaultShutdownGrace,
		budget:         defaultBudgetConfig(),

		maxMessageBytes: defaultMaxMessageBytes,
		maxQueued:       defaultMaxQueuedGuidance,
		maxQueuedBytes:  defaultMaxQueuedGuidanceBytes,
		maxCommands:     defaultMaxCommandRecords,

		snapshotInterval: defaultSnapshotInterval,
		statusRows:       defaultStatusRows,
	}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	c.budget.defDims, c.budget.ceilDims = c.budget.def.dims(), c.budget.ceiling.dims()
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
func WithObserver(o observe.Observer) Option {
	return optionFunc(func(cfg *config) {
		if o != nil {
			cfg.observer = o
		}
	})
}

// Every limit option below gives each value one meaning, on the in-process
// engine and on the durable runners (whose options of the same names are
// these, interpreted by work/driver's ResolveLimits): n > 0 is the limit; 0
// is the documented default, or no limit where the option says so; a
// negative value is invalid: the option changes nothing, and every Start,
// Call and SetPool fails with ErrInvalidLimit naming the option (an option
// cannot fail). The per-Work deadline is WithDefaultBudget's
// Budget.MaxDuration (0: the default, 30 minutes; -1: none).

// setLimit applies a limit option's value n to *dst: n when positive,
// zero (the default or 0 for no limit) when 0; a negative n is recorded as
// the configuration's ErrInvalidLimit.
func setLimit[T int | time.Duration](c *config, option string, n T, dst *T, zero T) {
	if v, detail, ok := limit.Value(option, n, zero); ok {
		*dst = v
	} else {
		c.recordErr(ErrInvalidLimit.detail(detail))
	}
}

// WithMaxRunning sets how many Works run at once across all owners
// (0: the default, 8). Work beyond it waits queued, FIFO and fair across
// owners. A child waiting in Result on its own descendants lends its slot
// to them (see "Running slots" in docs/engine.md). Negative: invalid.
func WithMaxRunning(n int) Option {
	return optionFunc(func(c *config) { setLimit(c, "WithMaxRunning", n, &c.maxRunning, defaultMaxRunning) })
}

// WithMaxOutstanding sets how many Works one owner may have queued or
// running (0: the default, 32). Negative: invalid.
func WithMaxOutstanding(n int) Option {
	return optionFunc(func(c *config) {
		setLimit(c, "WithMaxOutstanding", n, &c.maxOutstanding, defaultMaxOutstanding)
	})
}

// WithMaxStarts sets how many Works one owner may start over its lifetime
// (default 64; 0: no limit). Negative: invalid.
func WithMaxStarts(n int) Option {
	return optionFunc(func(c *config) { setLimit(c, "WithMaxStarts", n, &c.maxStarts, 0) })
}

// WithMaxDepth sets the owner nesting limit (0: the default, 4): an owner
// at depth d may start Work (or call a foreground child) only when d < n,
// so at most n levels of children run below a top-level owner. A
// top-level owner has depth 0; a child's own scope is one deeper than its
// owner. Negative: invalid.
func WithMaxDepth(n int) Option {
	return optionFunc(func(c *config) { setLimit(c, "WithMaxDepth", n, &c.maxDepth, defaultMaxDepth) })
}

// WithMaxResultBytes sets the maximum output size (default 1 MiB; 0: no
// limit). A larger output fails the Work with class result_too_large and
// is dropped (a foreground Call: ErrChildFailed with that class). It is
// also the ceiling of Spec.MaxResultBytes, which can only lower it (and
// bounds its Work when this is 0). Negative: invalid.
func WithMaxResultBytes(n int) Option {
	return optionFunc(func(c *config) { setLimit(c, "WithMaxResultBytes", n, &c.maxResultBytes, 0) })
}

// WithRetention bounds terminal Work kept readable per owner: at most count
// items (0: the default, 64) and, when age > 0, none finished longer than
// age ago (0: no age bound). Negative count or age: invalid. Work past the
// age bound is evicted first. Beyond the count bound the engine evicts, in
// this order, results already read, then failed and cancelled Work, and
// unread completed results last; within each group the oldest finished
// first. Unfinished Work is never evicted. Eviction is lazy: it happens on
// the owner's next start or operation, and as Work finishes.
func WithRetention(count int, age time.Duration) Option {
	return optionFunc(func(c *config) {
		setLimit(c, "WithRetention", count, &c.retainTerminal, defaultRetainTerminal)
		setLimit(c, "WithRetention", age, &c.retainAge, 0)
	})
}

// WithMaxMessageBytes sets the largest guidance message Send accepts
// (0: the default, 16 KiB); larger ones are ErrMessageTooLarge.
// Negative: invalid.
func WithMaxMessageBytes(n int) Option {
	return optionFunc(func(c *config) {
		setLimit(c, "WithMaxMessageBytes", n, &c.maxMessageBytes, defaultMaxMessageBytes)
	})
}

// WithGuidanceQueue bounds the accepted, undelivered guidance of one Work:
// at most count messages (0: the default, 32) and bytes bytes in all (0:
// the default, 64 KiB). A Send beyond either is ErrMailboxFull until the
// child drains its mailbox. Negative: invalid.
func WithGuidanceQueue(count, bytes int) Option {
	return optionFunc(func(c *config) {
		setLimit(c, "WithGuidanceQueue", count, &c.maxQueued, defaultMaxQueuedGuidance)
		setLimit(c, "WithGuidanceQueue", bytes, &c.maxQueuedBytes, defaultMaxQueuedGuidanceBytes)
	})
}

// WithCommandRecords sets how many idempotency records (one per accepted
// Send with a command id) one Work keeps (0: the default, 256); beyond it
// the oldest is dropped, and a replay of a dropped command is treated as a
// new command. Negative: invalid.
func WithCommandRecords(n int) Option {
	return optionFunc(func(c *config) {
		setLimit(c, "WithCommandRecords", n, &c.maxCommands, defaultMaxCommandRecords)
	})
}

// limits returns c's limits.
func (c *config) limits() limit.Limits {
	return limit.Limits{MaxRunning: c.maxRunning, MaxOutstanding: c.maxOutstanding, MaxStarts: c.maxStarts,
		MaxDepth: c.maxDepth, MaxDuration: c.budget.def.MaxDuration, MaxResultBytes: c.maxResultBytes,
		RetainTerminal: c.retainTerminal, RetainAge: c.retainAge,
		MaxMessageBytes: c.maxMessageBytes, MaxQueuedGuidance: c.maxQueued,
		MaxQueuedGuidanceBytes: c.maxQueuedBytes, MaxCommandRecords: c.maxCommands,
		Observer: c.observer, ExportDeployment: c.deployment, DeploymentTargets: c.deploymentTargets,
		SnapshotInterval: c.snapshotInterval, StatusRows: c.statusRows}
}

// resolveOptions returns what opts configure an engine with, resolved once
// (New): its limits (with the Observer), its clock, Shutdown's grace
// (WithShutdownGrace), its budget configuration (WithDefaultBudget,
// WithBudgetCeiling) and the first invalid option's error, which every
// Start, Call and SetPool returns (nil when every option is valid).
func resolveOptions(opts []Option) (l limit.Limits, clock Clock, grace time.Duration, budget budgetConfig, err error) {
	c := newConfig(opts)
	return c.limits(), c.clock, c.shutdownGrace, c.budget, c.err
}

// The durable engines take work's options (work/driver's ResolveLimits),
// so that every value of them has the in-process engine's meaning.
func init() {
	seam.ResolveLimits = func(opts any) (limit.Limits, error) {
		os, _ := opts.([]Option)
		c := newConfig(os)
		return c.limits(), c.err
	}
}

// recordErr keeps the first configuration problem an option found.
func (c *config) recordErr(err error) {
	if err != nil && c.err == nil {
		c.err = err
	}
}

// defaultShutdownGrace is how long Shutdown waits, by default, for
// cancelled children to return once its context has ended.
const defaultShutdownGrace = 5 * time.Second

// WithShutdownGrace sets how long Shutdown waits for cancelled children to
// return after its context has ended (default 5 s); children still running
// then are abandoned and reported as orphans. 0 means no wait. Negative
// values are ignored.
func WithShutdownGrace(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d >= 0 {
			c.shutdownGrace = d
		}
	})
}
