package driver

import (
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/internal/limit"
)

// Common is the configuration the durable runners' options of the same
// names share: work's options (WithOptions) and what they resolve to, the
// retryable targets and their attempts, the RPC timeout and the poll
// interval. A runner's configuration embeds it, and its option functions
// call the setters below, so that every value means the same on every
// runner and as work's limit options: a positive value is the value, 0
// the runner's default, a negative value invalid (work.ErrInvalidLimit
// naming the option, in Err, which every Start, Call and SetPool of the
// runner's Engine and its NewWorker return).
type Common struct {
	// Work are work's options in the order given; Resolve interprets them
	// with ResolveLimits into Limits.
	Work   []work.Option
	Limits Limits
	// Err is the first invalid option: a setter's, else Resolve's
	// (work.ErrInvalidLimit, work.ErrInvalidBudget).
	Err error
	// Retryable are the targets (by label) whose attempt may run again
	// when its process died, up to MaxAttempts attempts.
	Retryable    map[string]bool
	MaxAttempts  int
	RPCTimeout   time.Duration
	PollInterval time.Duration

	defaults transportDefaults // the runner's defaults of the three fields above
}

// transportDefaults are a runner's defaults (NewCommon).
type transportDefaults struct {
	maxAttempts              int
	rpcTimeout, pollInterval time.Duration
}

// NewCommon returns a Common with the runner's defaults: maxAttempts,
// rpcTimeout and pollInterval (each positive).
func NewCommon(maxAttempts int, rpcTimeout, pollInterval time.Duration) Common {
	c := Common{Retryable: map[string]bool{}, MaxAttempts: maxAttempts, RPCTimeout: rpcTimeout, PollInterval: pollInterval}
	c.defaults = transportDefaults{maxAttempts, rpcTimeout, pollInterval}
	return c
}

// Set applies a runner's option of that kind, named option, whose value
// is n to *dst: n when positive, def when 0; a negative n changes nothing
// and is recorded in c.Err (the first invalid option's error stays).
func Set[T int | time.Duration](c *Common, option string, n T, dst *T, def T) {
	if v, detail, ok := limit.Value(option, n, def); ok {
		*dst = v
	} else if c.Err == nil {
		c.Err = Detail(work.ErrInvalidLimit, detail)
	}
}

// SetRetryable declares labels retryable (WithRetryable).
func (c *Common) SetRetryable(labels []string) {
	if c.Retryable == nil {
		c.Retryable = map[string]bool{}
	}
	for _, l := range labels {
		c.Retryable[l] = true
	}
}

// SetMaxAttempts sets MaxAttempts (WithMaxAttempts).
func (c *Common) SetMaxAttempts(n int) {
	Set(c, "WithMaxAttempts", n, &c.MaxAttempts, c.defaults.maxAttempts)
}

// SetRPCTimeout sets RPCTimeout (WithRPCTimeout).
func (c *Common) SetRPCTimeout(d time.Duration) {
	Set(c, "WithRPCTimeout", d, &c.RPCTimeout, c.defaults.rpcTimeout)
}

// SetPollInterval sets PollInterval (WithPollInterval).
func (c *Common) SetPollInterval(d time.Duration) {
	Set(c, "WithPollInterval", d, &c.PollInterval, c.defaults.pollInterval)
}

// AddWork appends work's options (WithOptions).
func (c *Common) AddWork(opts ...work.Option) { c.Work = append(c.Work, opts...) }

// Resolve sets Limits from Work, and Err to their error unless a setter
// recorded one first. Call it once, after every option has applied.
func (c *Common) Resolve() {
	var err error
	c.Limits, err = ResolveLimits(c.Work...)
	if c.Err == nil {
		c.Err = err
	}
}

// Attempts returns how many attempts Work of target label may have:
// MaxAttempts when the label is retryable, else 1.
func (c *Common) Attempts(label string) int {
	if c.Retryable[label] {
		return c.MaxAttempts
	}
	return 1
}
