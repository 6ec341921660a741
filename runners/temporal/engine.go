package temporal

import (
	"context"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// OwnerSearchAttribute is the Keyword search attribute every Work workflow
// carries with its owner's id, so that operators find an owner's Work in
// Temporal's visibility. The namespace must have it registered
// (temporal operator search-attribute create --name AgentworkOwner --type
// Keyword, or --search-attribute AgentworkOwner=Keyword on the dev server).
const OwnerSearchAttribute = "AgentworkOwner"

var ownerKey = temporal.NewSearchAttributeKeyKeyword(OwnerSearchAttribute)

// Engine is a work.Engine whose Work runs on Temporal: one workflow per
// Work (its id is the Work id), its child's run as an activity on a Worker
// that registered the target, one registry workflow per owner holding the
// owner's visible Work and enforcing its limits across every coordinator
// process. Work survives the loss of the coordinator and of workers: a
// coordinator that restarts with the same owner id sees its Work again.
//
// Refs say "durable" for execution and rejoin; Status counts real
// attempts. Foreground calls (Call) run in the calling process, on an
// in-process work.Supervisor with the same limits. A Work's budget
// (Spec.Budget, the budget options of WithLimits) travels with it and
// is counted on the worker as in-process; an owner's pool (SetPool) is
// kept by its registry.
//
// Each method bounds its calls to Temporal by the caller's ctx, each call
// capped at the RPC timeout (WithRPCTimeout), with one exception: Start's
// admission and workflow start are bounded by the RPC timeout alone (a ctx
// that ends during them does not interrupt them; see Start). An Engine is safe for concurrent use; Close
// releases the in-process part (the Temporal client stays the caller's).
//
// Besides the methods listed here, an Engine has those of work.Engine,
// work.Approvals and work.Updater that package work/driver writes once
// for every durable engine (driver.Portable: Status, List, Rows, Result,
// Settled, Live, Subscribe, Detach, Send, Answer, Release, Updates,
// Pending, Approve, Deny, Observer, Now) and Close, which ends the
// Subscriptions and cancels the foreground calls in progress, waiting for
// them while ctx allows; Work on the service is unaffected.
type Engine struct {
	c     client.Client
	cfg   config
	local *work.Supervisor

	life driver.Life // closed, the Subscriptions and the deployment watch

	census   census // the deployment view (engine_census.go)
	portable        // the contract's rules that need no call to the service (engine_query.go)
}

// New returns an Engine that starts Work through c. The Workers that run
// the children must use the same task queue (WithTaskQueue).
func New(c client.Client, opts ...Option) *Engine {
	cfg := newConfig(opts)
	// The local Supervisor resolves budgets and runs foreground calls
	// with the same options, its output bound lowered as the Work's.
	local := work.New(append(append([]work.Option{work.WithObserver(cfg.observer)}, cfg.opts...),
		work.WithMaxResultBytes(cfg.limits.MaxResultBytes))...)
	e := &Engine{c: c, cfg: cfg, local: local}
	e.portable = portable{Store: (*store)(e), Events: cfg.observer, Local: local, Limits: cfg.limits, RetainAge: cfg.limits.RetainAge,
		PollInterval: cfg.pollInterval, Life: &e.life}
	if wt, ok := cfg.observer.(work.Watcher); ok && cfg.ops.Export {
		e.life.Watching(wt.Watch(e))
	}
	return e
}

var _ work.Engine = (*Engine)(nil)

func ownerWorkflowID(owner string) string { return "agentwork-owner/" + owner }

// rpc derives the context of one call to Temporal from the caller's ctx,
// capped at the RPC timeout (WithRPCTimeout).
func (e *Engine) rpc(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, e.cfg.rpcTimeout)
}

func (e *Engine) update(ctx context.Context, id, name string, out any, args ...any) error {
	return fromTemporal(update(ctx, e.c, id, name, out, args...))
}

// update sends update name with args to workflow id, waits until the
// workflow has applied it and decodes its result into out (nil: none).
func update(ctx context.Context, c client.Client, id, name string, out any, args ...any) error {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: name,
		Args: args, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err == nil {
		err = h.Get(ctx, out)
	}
	return err
}
