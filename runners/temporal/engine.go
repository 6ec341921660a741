package temporal

import (
	"context"
	"errors"

	enumspb "go.temporal.io/api/enums/v1"
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

// engine is the work.Engine implementation New wraps (driver.NewEngine).
type engine struct {
	c   client.Client
	cfg config

	census   census // what the deployment view's reads keep (engine_census.go)
	portable        // the contract's rules that need no call to the service
}

// New returns a work.Engine whose Work runs on Temporal: one workflow per
// Work (its id is the Work id), its child's run as an activity on a Worker
// that registered the target, one registry workflow per owner holding the
// owner's visible Work and enforcing its limits across every coordinator
// process. Work survives the loss of the coordinator and of workers: a
// coordinator that restarts with the same owner id sees its Work again.
//
// Refs say "durable" for execution and rejoin; Status counts real
// attempts. Foreground calls (Call) run in the calling process, on an
// in-process work.Engine with the same limits. A Work's budget
// (Spec.Budget, the budget options of WithOptions) travels with it and
// is counted on the worker as in-process; an owner's pool (SetPool) is
// kept by its registry.
//
// Each method bounds its calls to Temporal by the caller's ctx, each call
// capped at the RPC timeout (WithRPCTimeout), with one exception: Start's
// admission and workflow start are bounded by the RPC timeout alone (a ctx
// that ends during them does not interrupt them; see Start). The Engine is
// safe for concurrent use; Close releases the in-process part (the
// Temporal client stays the caller's).
//
// Its methods are those of every work.Engine, written once in package
// work/driver for every durable engine (driver.Portable). Close ends the
// Subscriptions and cancels the foreground calls in progress, waiting for
// them while ctx allows; Work on the service is unaffected. Shutdown
// closes it as Close does (there is no local Work to drain).
//
// Snapshot returns the deployment's live Work as Temporal keeps it
// (observe.Watched, a Deployment snapshot), read at most once per
// work.WithSnapshotInterval (default 15 s) and reused in between, so that a
// scrape never fans out: concurrent callers share one refresh. A refresh
// lists the open agentwork.Work workflows of this task queue
// (visibility: their memo, set when each started, says its target,
// creation time, and whether it is an external job or needed approval;
// AgentworkOwner its owner), describes each target's activity queue (its
// backlog count and age, Temporal's own figures, and its pollers),
// queries the approvals index (ApprovalsWorkflowName) only when a listed
// Work needed approval (when no worker answers, its last answer stands
// in), and describes the newest work.WithStatusRows live Works of each
// target (none for a Work awaiting approval): their attempt's state
// (scheduled: queued; started: running; cancel requested:
// cancel-requested), attempt count and progress, and for an external job
// past its submit that it waits; the rest are counted in LiveOmitted.
// docs/operating-temporal.md says what each call costs.
//
// Its counts are live Work only (closed workflows are Temporal's history):
// queued is the target's backlog (at most its open Works not awaiting
// approval) plus its Work awaiting approval (AwaitingApproval,
// OldestApproval; in no task queue, so not in Snapshot.Queued nor in the
// oldest queued age), running the rest, cancel-requested Work included
// (each Worker's Snapshot reports its own). Waiting counts the external
// jobs that wait for their result: those the rows show waiting, and the
// jobs beyond the rows that the backlog does not account for, exact while
// a target's queued and submitting jobs are among its newest rows.
// docs/operating-temporal.md says why, and what this cannot tell apart.
//
// A refresh's calls are bounded by ctx and each by the RPC timeout; a
// failed refresh returns its error (the gauges then report nothing that
// round) and is retried at the next call. After Close it returns
// work.ErrClosed.
//
// It starts Work through c. The Workers that run the children must use
// the same task queue (WithTaskQueue). With a nil c every method that
// would reach Temporal returns work.ErrUnavailable.
func New(c client.Client, opts ...Option) *work.Engine {
	return driver.NewEngine(newEngine(c, opts...))
}

// newEngine is New's engine.
func newEngine(c client.Client, opts ...Option) *engine {
	cfg := newConfig(opts)
	e := &engine{c: c, cfg: cfg}
	dc := driver.Config{Options: cfg.Work, Limits: cfg.Limits,
		PollInterval: cfg.PollInterval, Read: e.readDeployment, Watched: e}
	if c == nil {
		dc.Unusable = errNoClient
	}
	driver.Init(&e.portable, (*store)(e), dc)
	return e
}

var _ driver.Engine = (*engine)(nil)

// errNoClient is the error of an Engine or Worker made with a nil client.
var errNoClient = driver.Detail(work.ErrUnavailable, "no Temporal client (nil)")

func ownerWorkflowID(owner string) string { return "agentwork-owner/" + owner }

// rpc derives the context of one call to Temporal from the caller's ctx,
// capped at the RPC timeout (WithRPCTimeout).
func (e *engine) rpc(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, e.cfg.RPCTimeout)
}

// update sends update name with args to workflow id within the RPC
// timeout (see update), its error as the engine's (see timedOut).
func (e *engine) update(ctx context.Context, id, name string, out any, args ...any) error {
	rctx, cancel := e.rpc(ctx)
	defer cancel()
	return timedOut(ctx, fromTemporal(update(rctx, e.c, id, name, out, args...)))
}

// tell sends update name with id to o's registry within the RPC timeout
// (see tellOwner), its error as the engine's (see timedOut).
func (e *engine) tell(ctx context.Context, o work.Owner, name, id string) error {
	rctx, cancel := e.rpc(ctx)
	defer cancel()
	return timedOut(ctx, fromTemporal(tellOwner(rctx, e.c, ownerWorkflowID(o.ID()), name, id)))
}

// timedOut is err, a call's error made within the caller's ctx, with the
// RPC timeout's end told from the caller's: a service that did not answer
// in time is work.ErrUnavailable; the caller's own end stays its error.
func timedOut(ctx context.Context, err error) error {
	if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, work.ErrUnavailable) {
		return driver.Wrap(work.ErrUnavailable, err)
	}
	return err
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

// updateWithStart sends update name with arg to workflow id, starting it
// (workflow type wf on queue, with input start) if it is not running, or
// again if it closed; it waits until the workflow has applied the update
// and decodes its result into out (nil: none). updateID is the update's
// id ("": a new one).
func updateWithStart(ctx context.Context, c client.Client, id, queue, wf string, start any, updateID, name string, out, arg any) error {
	op := c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{ID: id, TaskQueue: queue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE}, wf, start)
	h, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: op,
		UpdateOptions: client.UpdateWorkflowOptions{UpdateID: updateID, WorkflowID: id, UpdateName: name,
			WaitForStage: client.WorkflowUpdateStageCompleted, Args: []any{arg}}})
	if err == nil {
		err = h.Get(ctx, out)
	}
	return err
}
