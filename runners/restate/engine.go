package restate

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// engine is the work.Engine implementation New wraps (driver.NewEngine).
type engine struct {
	cfg config
	in  *ingress

	mu     sync.Mutex
	served map[string]bool // target labels whose Work service is registered (WithAdmin)

	portable // the contract's rules that need no call to the service
}

var _ driver.Engine = (*engine)(nil)

// New returns a work.Engine whose Work runs on Restate (see the package
// doc's mapping): an owner's registry object admits and lists its Work
// across every coordinator process; each Work is a workflow run by the
// Worker that registered its target, with a control object for its state
// and guidance. Work survives the loss of the coordinator and of workers:
// a coordinator that restarts with the same owner id sees its Work again.
//
// Refs say "durable" for execution and rejoin; Status counts real
// attempts. Foreground calls (Call) run in the calling process, on an
// in-process work.Engine with the same limits. Each method bounds its
// calls to Restate by the caller's ctx, each capped at WithRPCTimeout,
// except Start's admission (see Start). An Engine is safe for concurrent
// use; Close releases the in-process part.
//
// Its methods are those of every work.Engine, written once in package
// work/driver for every durable engine (driver.Portable). Close ends the
// Subscriptions and cancels the foreground calls in progress, waiting for
// them while ctx allows; Work on the service is unaffected. Shutdown
// closes it as Close does (there is no local Work to drain).
//
// Snapshot returns the deployment's live Work as Restate keeps it
// (observe.Watched, a Deployment snapshot), read at most once per
// work.WithSnapshotInterval (default 15 s) and reused in between, so that a
// scrape never fans out: concurrent callers share one refresh. A refresh
// is three SQL queries (two with work.WithStatusRows(0)) on the admin API's
// introspection endpoint (POST <admin>/query), whatever the number of
// Works, owners or targets:
//
//   - the live Work by target, state, job waiting and approval awaited:
//     the Work workflows ("<ns>.Work.<label>", handler Run) whose
//     invocation Restate has not completed (sys_invocation), joined with
//     their control object's state (its fields read on the server with
//     json_get_*: no stored value leaves Restate whole, so neither an
//     input awaiting approval nor guidance waiting in a mailbox reaches
//     this process), with each group's oldest queue entry (the Work's
//     invocation's creation, Restate's clock, or its approval) and
//     oldest approval request (the Work's creation);
//   - the newest work.WithStatusRows live Works of each target (a window
//     function on the server), the rest counted in LiveOmitted: their
//     owner, state, attempt, creation, start and approval, and whether
//     they wait;
//   - the registered services (sys_service): a target whose Work
//     workflow a deployment serves has Pollers 1 (Restate routes a
//     service to the deployment registered last, and pushes invocations
//     to it: nothing polls), else 0. Registered is not reachable: an
//     unreachable deployment shows as Work that stays queued.
//
// The counts are exact, cancel-requested included (the control object
// knows it); terminal Work is not counted. Work awaiting its approval
// counts as queued and in AwaitingApproval (with OldestApproval), not in
// Queued nor in the oldest queued age; an external job between its
// submit and its result counts as running and in Waiting. It holds no
// slots (each Worker's Snapshot reports its own).
//
// A refresh's queries are bounded by ctx and each by the RPC timeout; a
// failed refresh returns its error (the gauges then report nothing that
// round) and is retried at the next call. It needs WithAdmin (else
// work.ErrUnavailable); after Close it returns
// work.ErrClosed.
//
// It calls Restate's ingress (WithIngress,
// required: without it every call is work.ErrUnavailable).
func New(opts ...Option) *work.Engine {
	return driver.NewEngine(newEngine(opts...))
}

// newEngine is New's engine.
func newEngine(opts ...Option) *engine {
	cfg := newConfig(opts)
	e := &engine{cfg: cfg, in: newIngress(cfg.ingress, cfg.ns, cfg.RPCTimeout, cfg.hc), served: map[string]bool{}}
	dc := driver.Config{Options: cfg.Work, Limits: cfg.Limits,
		PollInterval: cfg.PollInterval, Read: e.readDeployment, Watched: e}
	if cfg.ingress == "" {
		dc.Unusable = driver.Detail(work.ErrUnavailable, "no ingress (WithIngress)")
	}
	driver.Init(&e.portable, (*store)(e), dc)
	return e
}

// rpc caps one call's context at the RPC timeout.
func (e *engine) rpc(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, e.cfg.RPCTimeout)
}

// Admissible returns the first invalid limit or budget option's error
// (driver.ResolveLimits' check). An Engine with no ingress is unusable
// (driver.Config.Unusable): every call it would make to Restate answers
// work.ErrUnavailable instead.
func (s *store) Admissible() error { return s.cfg.Err }

// servedTarget checks, with the admin API (WithAdmin; without it nothing
// is checked), that a Worker registered label's Work service: the
// admission's send to an unregistered service would hold the owner's
// registry until one registers. A registered target is remembered.
func (e *engine) servedTarget(ctx context.Context, label string) error {
	if e.cfg.admin == "" {
		return nil
	}
	e.mu.Lock()
	ok := e.served[label]
	e.mu.Unlock()
	if ok {
		return nil
	}
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(e.cfg.admin, "/")+"/services/"+url.PathEscape(workName(e.cfg.ns, label)), nil)
	if err != nil {
		return driver.Detail(work.ErrInvalidSpec, "a target label that is not a service name")
	}
	resp, err := e.in.hc.Do(req)
	if err != nil {
		return fromIngress(ctx, err)
	}
	_ = resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
		e.mu.Lock()
		e.served[label] = true
		e.mu.Unlock()
		return nil
	case resp.StatusCode == http.StatusNotFound:
		return driver.Detail(work.ErrInvalidSpec, "no Worker has registered this target")
	}
	return driver.Detail(work.ErrUnavailable, "the admin API answered "+resp.Status)
}
