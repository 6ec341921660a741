package temporal

import (
	"time"

	"go.temporal.io/sdk/converter"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// Defaults of the runner. The limits are the in-process engine's.
const (
	DefaultTaskQueue        = "agentwork"
	DefaultHeartbeatTimeout = 10 * time.Second
	DefaultRPCTimeout       = 10 * time.Second
	defaultMaxAttempts      = 3 // for a child declared retryable
)

// Option configures an Engine or a Worker.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	// Common holds work's options (WithOptions), interpreted by
	// driver.ResolveLimits into Limits and Err so that every value means
	// here what it means to the in-process engine (newConfig then
	// lowers the result bound to maxResultPayload), and the options this
	// runner shares by name with the others.
	driver.Common
	taskQueue        string
	heartbeatTimeout time.Duration
	admissionGrace   time.Duration           // 0: admissionGrace
	pollsPerRun      int                     // a waiting job's polls per workflow run (options_wait.go)
	namespace        string                  // for the task queue statistics (WithNamespace)
	dc               converter.DataConverter // memos and heartbeat details (WithDataConverter)
}

// maxResultPayload is the largest output a Work may have on this runner
// (1.5 MiB, well below Temporal's 2 MB payload limit): a larger
// work.WithMaxResultBytes, and 0 (no limit of the Engine's own), are lowered
// to it.
const maxResultPayload = 3 << 19

func newConfig(opts []Option) config {
	c := config{
		Common:           driver.NewCommon(defaultMaxAttempts, DefaultRPCTimeout, 250*time.Millisecond),
		taskQueue:        DefaultTaskQueue,
		heartbeatTimeout: DefaultHeartbeatTimeout,
		pollsPerRun:      defaultPollsPerRun,
		namespace:        "default",
		dc:               converter.GetDefaultDataConverter(),
	}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	c.Resolve()
	if c.Limits.MaxResultBytes == 0 || c.Limits.MaxResultBytes > maxResultPayload {
		c.Limits.MaxResultBytes = maxResultPayload
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

// shared is the Option of one of the settings the runners share by name
// (driver.Common), which its setter applies.
func shared[T any](set func(*driver.Common, T), v T) Option {
	return optionFunc(func(c *config) { set(&c.Common, v) })
}

// WithRetryable declares the children (by label) whose attempt may be run
// again when the process running it dies: up to WithMaxAttempts attempts.
// Other children are never replayed: their Work fails with class
// worker_lost (their tools may have had side effects).
func WithRetryable(labels ...string) Option { return shared((*driver.Common).SetRetryable, labels) }

// WithMaxAttempts sets the attempts of a retryable child (0: the default,
// 3). Negative: invalid, as a limit option's.
func WithMaxAttempts(n int) Option { return shared((*driver.Common).SetMaxAttempts, n) }

// WithHeartbeatTimeout sets how long an attempt may go without a
// heartbeat before Temporal declares its worker lost (0: the default,
// 10 s). Workers heartbeat at a third of it and at every model boundary,
// until the child returns (a cancelled child included); a cancel reaches
// a running child with the next heartbeat, within about a third of it.
// Negative: invalid, as a limit option's.
func WithHeartbeatTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) {
		driver.Set(&c.Common, "WithHeartbeatTimeout", d, &c.heartbeatTimeout, DefaultHeartbeatTimeout)
	})
}

// WithAdmissionGrace sets how long after a Work's admission its owner's
// registry looks for the Work's workflow when it has heard nothing of it
// (0: the default, 5 minutes): a coordinator that died between the
// admission and the workflow's start leaves a record that would count
// against the owner's outstanding limit and hold its pool reservation
// forever; the registry forgets it once the grace has passed and Temporal
// says the workflow does not exist. Keep it well above the RPC timeout.
// The Engine that creates an owner's registry sets it for that registry.
// Negative: invalid, as a limit option's.
func WithAdmissionGrace(d time.Duration) Option {
	return optionFunc(func(c *config) { driver.Set(&c.Common, "WithAdmissionGrace", d, &c.admissionGrace, 0) })
}

// WithRPCTimeout caps each call an Engine method makes to Temporal
// (0: the default, 10 s); the method's ctx may end it sooner. Negative:
// invalid, as a limit option's.
func WithRPCTimeout(d time.Duration) Option { return shared((*driver.Common).SetRPCTimeout, d) }

// WithPollInterval sets how often a Subscription reads its owner's
// registry for settled Work (0: the default, 250 ms). Negative: invalid,
// as a limit option's.
func WithPollInterval(d time.Duration) Option { return shared((*driver.Common).SetPollInterval, d) }

// WithOptions gives the Engine or Worker work's options: the limit and
// budget options (work.WithMaxRunning, WithMaxOutstanding, WithMaxStarts,
// WithMaxDepth, WithMaxResultBytes, WithRetention, WithMaxMessageBytes,
// WithGuidanceQueue, WithCommandRecords, WithDefaultBudget,
// WithBudgetCeiling), the deployment view's (work.WithDeploymentGauges,
// WithSnapshotInterval, WithStatusRows) and the Observer
// (work.WithObserver), with the same meaning of every value, 0 and
// negative included: driver.ResolveLimits interprets them, in the order
// given across every WithOptions. An invalid value makes every Start,
// Call and SetPool of the Engine, and NewWorker, fail with its error
// (work.ErrInvalidLimit, work.ErrInvalidBudget). work's other options
// change nothing here. Give coordinators' Engines and the Workers of one
// deployment the same limits.
//
// The Observer: on an Engine the middleware reports through it, and so
// do the foreground calls, refused starts, result reads and the detach
// of ended Work; on a Worker it gets the lifecycle events of the Work it
// runs (see "Telemetry" in the package doc).
//
// On this runner: MaxRunning is per Worker process and target (Temporal
// has no global bound); an output never exceeds 1.5 MiB, well below
// Temporal's 2 MB payload limit (a larger MaxResultBytes, and 0, mean
// 1.5 MiB); the per-Work deadline is the default budget's MaxDuration.
// The owner's registry is workflow state and evicts at deterministic
// points of its history, by workflow time: beyond the retention count as
// each Work finishes, in work.WithRetention's order; past the age
// whenever the registry applies an update (it sets no timer for it).
// Between updates the Engine's reads hide the records already past the
// age by its clock; a Subscription still delivers the notice of Work
// that expired before its next poll.
func WithOptions(opts ...work.Option) Option {
	return optionFunc(func(c *config) { c.AddWork(opts...) })
}

// WithDataConverter gives the Engine or Worker the data converter its
// client was dialed with (client.Options.DataConverter; default the SDK's
// default converter). Payloads the SDK encodes with the client's
// converter and the runner reads itself are decoded with it: the memos of
// the deployment view (Snapshot) and the heartbeat details that carry a
// running Work's progress (Status, Snapshot). Search attributes stay on
// the default converter, as the SDK encodes them. Under a payload codec
// (converter.NewCodecDataConverter), give it the same converter as the
// client: a payload the runner cannot decode is an error,
// work.ErrUnavailable, never a silent zero. Give every Worker the same
// option: its workflows open with it the heartbeat details of an attempt
// timed out during a server outage, to take the attempt back from the
// Worker still running it (the client's failure converter decodes them
// with the SDK's default converter unless it was given one of its own;
// without the option such Work fails worker_lost). nil is ignored.
func WithDataConverter(dc converter.DataConverter) Option {
	return optionFunc(func(c *config) {
		if dc != nil {
			c.dc = dc
		}
	})
}

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
