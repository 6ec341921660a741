package restate

import (
	"log/slog"
	"net/http"
	"time"

	restate "github.com/restatedev/sdk-go"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// DefaultServicePrefix prefixes the runner's service names by default.
const DefaultServicePrefix = "agentwork"

// Option configures an Engine or a Worker (each ignores what does not
// concern it). Coordinators and workers of one deployment must agree on
// WithServicePrefix and WithIngress.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	// Common holds work's options (WithOptions), interpreted by
	// driver.ResolveLimits into Limits and Err so that every value means
	// here what it means to the in-process engine, and the options
	// this runner shares by name with the others.
	driver.Common
	ns        string
	ingress   string
	admin     string
	advertise string
	listen    string
	logger    slog.Handler
	registry  bool
	hc        *http.Client // WithHTTPClient (nil: a plain client)
	identity  []string     // WithIdentityKeys
	ring      *keyRing     // WithContentKeys (nil: content is stored as is)
}

func newConfig(opts []Option) config {
	c := config{
		Common: driver.NewCommon(3, 30*time.Second, 100*time.Millisecond),
		ns:     DefaultServicePrefix,
		logger: slog.DiscardHandler,
	}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	c.Resolve()
	if c.Err == nil && c.ring != nil {
		c.Err = c.ring.err
	}
	return c
}

// WithServicePrefix prefixes the service names ("<ns>.Owner", "<ns>.Control",
// "<ns>.Work.<label>"; default "agentwork"), so that several deployments
// share one Restate server.
func WithServicePrefix(ns string) Option {
	return optionFunc(func(c *config) {
		if ns != "" {
			c.ns = ns
		}
	})
}

// WithIngress sets the base URL of Restate's ingress (required: the Engine
// calls the services through it, and a Worker's attempts call the Work's
// control object through it).
func WithIngress(url string) Option { return optionFunc(func(c *config) { c.ingress = url }) }

// WithAdmin sets the base URL of Restate's admin API, where Worker.Start
// registers its deployment (required for a Worker), and where an Engine
// checks that a Start's target is registered (recommended: without it a
// Start for a target that no Worker registered holds its owner's registry
// until one does, Restate retrying the admission).
func WithAdmin(url string) Option { return optionFunc(func(c *config) { c.admin = url }) }

// WithAdvertisedURL sets the URL Restate reaches the Worker's deployment
// at (default: http:// and the address it listens on), for a Worker
// behind a load balancer.
func WithAdvertisedURL(url string) Option { return optionFunc(func(c *config) { c.advertise = url }) }

// WithListenAddress sets the loopback address a Worker's deployment
// listens on (default "127.0.0.1:0", a free port). Restate keeps an
// invocation that started on a deployment on that deployment's URL: a
// worker process that restarts to take over its attempts listens where
// it did (or sits behind a stable URL, WithAdvertisedURL).
func WithListenAddress(addr string) Option { return optionFunc(func(c *config) { c.listen = addr }) }

// WithRegistry makes a Worker serve the registry services (the owners'
// and the Works' objects) besides its targets. A deployment has exactly
// one deployment URL serving them; the lifecycle events are reported to
// the Observer of the process that does.
func WithRegistry() Option { return optionFunc(func(c *config) { c.registry = true }) }

// shared is the Option of one of the settings the runners share by name
// (driver.Common), which its setter applies.
func shared[T any](set func(*driver.Common, T), v T) Option {
	return optionFunc(func(c *config) { set(&c.Common, v) })
}

// WithRetryable declares targets whose child may run again when its
// attempt died with its process (up to WithMaxAttempts attempts); other
// targets' Work then fails with class worker_lost.
func WithRetryable(labels ...string) Option { return shared((*driver.Common).SetRetryable, labels) }

// WithMaxAttempts sets the attempts of a retryable target (0: the
// default, 3). Negative: invalid, as a limit option's.
func WithMaxAttempts(n int) Option { return shared((*driver.Common).SetMaxAttempts, n) }

// WithRPCTimeout caps each call to Restate (0: the default, 30 s).
// Negative: invalid, as a limit option's.
func WithRPCTimeout(d time.Duration) Option { return shared((*driver.Common).SetRPCTimeout, d) }

// WithPollInterval sets how often a Subscription reads its owner's
// registry and a child's question wait reads its Work (0: the default,
// 100 ms); a running attempt reads its Work's state every four
// intervals, a fallback of the cancel its workflow pushes. Negative:
// invalid, as a limit option's.
func WithPollInterval(d time.Duration) Option { return shared((*driver.Common).SetPollInterval, d) }

// WithHTTPClient sets the HTTP client of the Engine's and the Worker's
// calls to Restate's ingress and admin API (default: a plain
// http.Client), for a protected ingress or admin API: its Transport adds
// the credentials (a header, a client certificate). Each call stays
// capped at WithRPCTimeout (a shorter Timeout of c's is kept). It changes
// nothing of what the Worker serves (WithIdentityKeys). nil: ignored.
func WithHTTPClient(c *http.Client) Option {
	return optionFunc(func(cfg *config) {
		if c != nil {
			cfg.hc = c
		}
	})
}

// WithIdentityKeys has the Worker serve only the requests the Restate
// server signed with one of keys: the server's request identity public
// keys, in the form Restate prints them ("publickeyv1_..."; the server
// signs with the Ed25519 private key of its
// request-identity-private-key-pem-file, in [worker.invoker]). Any other
// request, unsigned or signed by another key, is refused (401) before a
// handler sees it; the SDK checks the signature, its expiry and the path
// it was made for (server.WithIdentityV1). Several keys allow a rotation.
// Without it the Worker serves whoever reaches its address. An invalid
// key makes NewWorker fail; an Engine ignores it.
func WithIdentityKeys(keys ...string) Option {
	return optionFunc(func(c *config) { c.identity = append(c.identity, keys...) })
}

// WithContentKeys has the Engine and the Worker seal the content they
// store in Restate: a Work's input (kept while it awaits its approval
// too), its output, guidance texts, update values and an external job's
// handle, each with AES-256-GCM under current, with a fresh random nonce
// and its Work's id and field name as associated data. older keys only
// open content sealed before a rotation. Each key is 32 random bytes; a
// key of another size makes NewWorker fail, and every Start, Call and
// SetPool of the Engine (as an invalid limit does), and nothing is then
// stored unsealed.
//
// Give every Engine and Worker of a deployment the same keys, the
// registry's Worker included (it opens update values to decide on them).
// To rotate: add the new key as an older one everywhere, then make it
// current everywhere, then drop the old key once nothing sealed under it
// is kept (its Works evicted from their registries). Content the keys
// cannot open is an error wrapping ErrUndecryptable (a Worker fails the
// Work with class "content_key"), never an empty value; content stored
// before the keys were given is read as it is.
//
// What stays in the clear: Work, owner and target ids, labels, kinds,
// states, attempts, times, sizes, counts, budgets and usage, the launch's
// trace context, update keys, and the SHA-256 digests of inputs and
// guidance texts that detect repeated launches and commands.
func WithContentKeys(current []byte, older ...[]byte) Option {
	return optionFunc(func(c *config) {
		c.ring = newKeyRing(current, older)
	})
}

// WithLogger sets the handler of the Restate SDK's own log lines (default:
// discarded), and of the Worker's when it cannot open a Work's sealed
// content (WithContentKeys). They carry invocation and Work ids and
// errors, never a handler's input or output.
func WithLogger(h slog.Handler) Option {
	return optionFunc(func(c *config) {
		if h != nil {
			c.logger = h
		}
	})
}

// minServiceTimeout is the least inactivity and abort timeout of the
// runner's services (a Work with no maximum duration gets it).
const minServiceTimeout = 24 * time.Hour

// timeouts are the service options every service of the runner gets: an
// inactivity and an abort timeout above the longest Work (maxDuration and
// an hour, at least a day), since an attempt sends Restate nothing while
// its child runs and Restate would otherwise abort and retry it (the
// server's defaults are 1 and 10 minutes); retries from 50 ms doubling to
// 2 s.
func timeouts(maxDuration time.Duration) []restate.ServiceDefinitionOption {
	d := max(minServiceTimeout, maxDuration+time.Hour)
	return []restate.ServiceDefinitionOption{
		restate.WithInactivityTimeout(d), restate.WithAbortTimeout(d),
		restate.WithInvocationRetryPolicy(restate.WithInitialRetryInterval(50*time.Millisecond),
			restate.WithMaxRetryInterval(2*time.Second), restate.WithRetryIntervalFactor(2)),
	}
}

// noJournal drops a completed invocation's journal at once: the registry
// objects' invocations carry a Work's input (admission) and guidance
// (send, take), which must not outlive their handler. Their state is
// what they keep.
var noJournal = restate.WithJournalRetention(0)

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
// On this runner: MaxRunning is per Worker process and target; the
// default budget's MaxDuration is the per-Work deadline from running
// (default 30 minutes), and a Worker sets its services' inactivity and
// abort timeouts above it. The registry evicts beyond the retention count
// as each Work ends, and past the age at each admission; between
// admissions the Engine's reads hide the records already past the age by
// its clock.
func WithOptions(opts ...work.Option) Option {
	return optionFunc(func(c *config) { c.AddWork(opts...) })
}
