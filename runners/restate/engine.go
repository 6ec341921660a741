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

// Engine is a work.Engine whose Work runs on Restate (see the package
// doc's mapping): an owner's registry object admits and lists its Work
// across every coordinator process; each Work is a workflow run by the
// Worker that registered its target, with a control object for its state
// and guidance. Work survives the loss of the coordinator and of workers:
// a coordinator that restarts with the same owner id sees its Work again.
//
// Refs say "durable" for execution and rejoin; Status counts real
// attempts. Foreground calls (Call) run in the calling process, on an
// in-process work.Supervisor with the same limits. Each method bounds its
// calls to Restate by the caller's ctx, each capped at WithRPCTimeout,
// except Start's admission (see Start). An Engine is safe for concurrent
// use; Close releases the in-process part.
//
// Besides the methods listed here, an Engine has those of work.Engine,
// work.Approvals and work.Updater that package work/driver writes once
// for every durable engine (driver.Portable: Status, List, Rows, Result,
// Settled, Live, Subscribe, Detach, Send, Answer, Release, Updates,
// Pending, Approve, Deny, Observer, Now) and Close, which ends the
// Subscriptions and cancels the foreground calls in progress, waiting for
// them while ctx allows; Work on the service is unaffected.
type Engine struct {
	cfg   config
	in    *ingress
	local *work.Supervisor

	life   driver.Life // closed, the Subscriptions and the deployment watch
	mu     sync.Mutex
	served map[string]bool // target labels whose Work service is registered (WithAdmin)

	census   census // the deployment view (engine_census.go)
	portable        // the contract's rules that need no call to the service (engine_query.go)
}

var _ work.Engine = (*Engine)(nil)

// New returns an Engine that calls Restate's ingress (WithIngress,
// required: without it every call is work.ErrUnavailable).
func New(opts ...Option) *Engine {
	cfg := newConfig(opts)
	local := work.New(append([]work.Option{work.WithObserver(cfg.observer)}, cfg.opts...)...)
	e := &Engine{cfg: cfg, in: newIngress(cfg.ingress, cfg.ns, cfg.rpcTimeout), local: local,
		served: map[string]bool{}}
	e.portable = portable{Store: (*store)(e), Events: cfg.observer, Local: local, Limits: cfg.limits, RetainAge: cfg.limits.RetainAge,
		PollInterval: cfg.pollInterval, Life: &e.life}
	if wt, ok := cfg.observer.(work.Watcher); ok && cfg.ops.Export {
		e.life.Watching(wt.Watch(e))
	}
	return e
}

// rpc caps one call's context at the RPC timeout.
func (e *Engine) rpc(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, e.cfg.rpcTimeout)
}

// Admissible returns the first invalid limit or budget option's error
// (work.ResolveLimits' check), else ErrUnavailable when no ingress is
// configured.
func (s *store) Admissible() error {
	if s.cfg.err != nil {
		return s.cfg.err
	}
	if s.cfg.ingress == "" {
		return work.ErrUnavailable.Detail("no ingress (WithIngress)")
	}
	return nil
}

// servedTarget checks, with the admin API (WithAdmin; without it nothing
// is checked), that a Worker registered label's Work service: the
// admission's send to an unregistered service would hold the owner's
// registry until one registers. A registered target is remembered.
func (e *Engine) servedTarget(ctx context.Context, label string) error {
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
		return work.ErrInvalidSpec.Detail("a target label that is not a service name")
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
		return work.ErrInvalidSpec.Detail("no Worker has registered this target")
	}
	return work.ErrUnavailable.Detail("the admin API answered " + resp.Status)
}
