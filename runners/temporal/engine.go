package temporal

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/agentwork/agentwork/work"
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
// (Spec.Budget, WithDefaultBudget, WithBudgetCeiling) travels with it and
// is counted on the worker as in-process; an owner's pool (SetPool) is
// kept by its registry.
//
// The methods without a context bound each call to Temporal by the RPC
// timeout (WithRPCTimeout). An Engine is safe for concurrent use; Close
// releases the in-process part (the Temporal client stays the caller's).
type Engine struct {
	c     client.Client
	cfg   config
	local *work.Supervisor

	mu     sync.Mutex
	closed bool
	subs   map[*work.Subscription]func()
	wg     sync.WaitGroup
}

// New returns an Engine that starts Work through c. The Workers that run
// the children must use the same task queue (WithTaskQueue).
func New(c client.Client, opts ...Option) *Engine {
	cfg := newConfig(opts)
	local := work.New(append([]work.Option{work.WithObserver(cfg.observer), work.WithMaxDepth(cfg.maxDepth),
		work.WithMaxResultBytes(cfg.maxResultBytes)}, cfg.budget...)...)
	return &Engine{c: c, cfg: cfg, local: local, subs: map[*work.Subscription]func(){}}
}

var _ work.Engine = (*Engine)(nil)

// Close ends the Subscriptions, cancels the foreground calls in progress
// and waits for them, as work.Supervisor.Close. Work on Temporal is
// unaffected.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	e.closed = true
	subs := e.subs
	e.subs = map[*work.Subscription]func(){}
	e.mu.Unlock()
	for _, closeFn := range subs {
		closeFn()
	}
	e.wg.Wait()
	return e.local.Close(ctx)
}

// Subscribe returns a Subscription to o's completion notices, as
// work.Supervisor.Subscribe. The notices come from reading o's registry
// every poll interval (WithPollInterval): Temporal has no push to a client.
func (e *Engine) Subscribe(o work.Owner, buffer int) (*work.Subscription, error) {
	if err := validOwner(o); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	recs, err := e.records(o)
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		if r.State.Terminal() {
			seen[r.ID] = true
		}
	}
	stop := make(chan struct{})
	var once sync.Once
	sub, publish, closeFn := work.NewSubscription(buffer, func() { once.Do(func() { close(stop) }) })
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, work.ErrClosed
	}
	e.subs[sub] = closeFn
	e.wg.Add(1)
	e.mu.Unlock()
	go func() {
		defer e.wg.Done()
		defer func() {
			e.mu.Lock()
			delete(e.subs, sub)
			e.mu.Unlock()
		}()
		tick := time.NewTicker(e.cfg.pollInterval)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			recs, err := e.records(o)
			if err != nil {
				continue
			}
			for _, r := range recs {
				if r.State.Terminal() && !seen[r.ID] {
					seen[r.ID] = true
					publish(work.Notice{WorkID: r.ID, Target: r.Label, State: r.State,
						ResultAvailable: r.HasResult, Time: r.Finished})
				}
			}
		}
	}()
	return sub, nil
}

// Observer returns the configured Observer.
func (e *Engine) Observer() work.Observer { return e.cfg.observer }

// Now returns the current time.
func (e *Engine) Now() time.Time { return time.Now() }

func ownerWorkflowID(owner string) string { return "agentwork-owner/" + owner }

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (e *Engine) rpc() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), e.cfg.rpcTimeout)
}

func validOwner(o work.Owner) error {
	if o.IsZero() {
		return work.ErrInvalidOwner
	}
	if o.Depth() == 0 && strings.Contains(o.ID(), "/") {
		return work.ErrInvalidOwner.Detail(`a top-level owner id may not contain "/"`)
	}
	return nil
}

func validSpec(spec work.Spec) error {
	if err := validOwner(spec.Owner); err != nil {
		return err
	}
	if spec.Target.Label == "" {
		return work.ErrInvalidSpec.Detail("target label is empty")
	}
	if spec.Target.Kind != work.KindAgent && spec.Target.Kind != work.KindFunction {
		return work.ErrInvalidSpec.Detail("unknown target kind " + strconv.Itoa(int(spec.Target.Kind)))
	}
	if spec.Run == nil {
		return work.ErrInvalidSpec.Detail("run function is nil")
	}
	return nil
}

// Start admits Work in the owner's registry (atomically, against its
// limits) and starts its workflow. The child runs later on a Worker that
// registered spec.Target.Label, from spec.Input (spec.Run is not used).
func (e *Engine) Start(ctx context.Context, spec work.Spec) (work.Ref, error) {
	if err := validSpec(spec); err != nil {
		return work.Ref{}, err
	}
	o := spec.Owner
	if o.Depth() >= e.cfg.maxDepth {
		e.refused(ctx, spec, work.LimitDepth, "")
		return work.Ref{}, work.ErrLimit.Detail("nesting depth limit " + strconv.Itoa(e.cfg.maxDepth) + " reached")
	}
	launch := newLaunchInfo(ctx)
	caller := ctx
	targetID := spec.Target.ID
	if targetID == "" {
		targetID = spec.Target.Label
	}
	id := newID()
	now := time.Now().UTC()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.rpcTimeout)
	defer cancel()
	ownerWF := ownerWorkflowID(o.ID())
	// The budget resolves as in-process (the local Supervisor has the same
	// defaults, ceiling and maximum duration); the owner's registry applies
	// its pool at admission.
	budget := e.local.EffectiveBudget(spec)
	var reply admitReply
	err := e.updateOwner(ctx, o, updateAdmit, &reply, admitRequest{Record: ownerRecord{ID: id, Label: spec.Target.Label,
		TargetID: targetID, Kind: spec.Target.Kind, Created: now}, MaxOutstanding: e.cfg.maxOutstanding,
		MaxStarts: e.cfg.maxStarts, Retain: e.cfg.retain, Want: dims(spec.Budget), Eff: dims(budget),
		Function: spec.Target.Kind == work.KindFunction, Launch: launchKey(spec.CallID), Digest: launchDigest(spec)})
	if err != nil {
		if reason, short := refusalOf(err); reason != "" {
			e.refused(caller, spec, reason, short)
		}
		return work.Ref{}, fromTemporal(err)
	}
	if reply.Replay {
		return work.Ref{ID: reply.ID, TargetID: reply.TargetID, Durable: true}, nil
	}
	setDims(&budget, reply.Budget)
	maxDur := budget.MaxDuration
	maxBytes := e.cfg.maxResultBytes
	if spec.MaxResultBytes > 0 && spec.MaxResultBytes < maxBytes {
		maxBytes = spec.MaxResultBytes
	}
	attempts := 1
	if e.cfg.retryable[spec.Target.Label] {
		attempts = e.cfg.maxAttempts
	}
	in := workInput{ID: id, Owner: o.ID(), Depth: o.Depth(), Label: spec.Target.Label, TargetID: targetID,
		Kind: spec.Target.Kind, Input: spec.Input, TaskQueue: activityQueue(e.cfg.taskQueue, spec.Target.Label),
		OwnerWorkflow: ownerWF, MaxDuration: maxDur, MaxResultBytes: maxBytes, MaxAttempts: attempts,
		HeartbeatTimeout: e.cfg.heartbeatTimeout, Created: now,
		Mailbox: mailboxLimits{Messages: work.DefaultMaxQueuedGuidance, Bytes: work.DefaultMaxQueuedGuidanceBytes,
			Commands: work.DefaultMaxCommandRecords}, Launch: launch, Budget: budget, FailOnBudget: spec.FailOnBudget}
	_, err = e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: e.cfg.taskQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(ownerKey.ValueSet(o.ID())),
		Memo:                  map[string]any{"target": spec.Target.Label},
	}, WorkWorkflowName, in)
	if err != nil {
		sctx, scancel := e.rpc()
		defer scancel()
		_ = tellOwner(sctx, e.c, ownerWF, updateForget, id)
		return work.Ref{}, fromTemporal(err)
	}
	return work.Ref{ID: id, TargetID: targetID, Durable: true}, nil
}

func activityQueue(base, label string) string { return base + "." + label }

// launchKey is the SHA-256 of a launch identity, hex ("" for none): the
// registry keeps no tool-call id.
func launchKey(callID string) string {
	if callID == "" {
		return ""
	}
	k := sha256.Sum256([]byte(callID))
	return hex.EncodeToString(k[:])
}

func launchDigest(spec work.Spec) string {
	if spec.CallID == "" {
		return ""
	}
	return hex.EncodeToString(spec.InputDigest[:])
}

// updateOwner sends an update to o's registry, starting the registry if
// it is not running (update with start).
func (e *Engine) updateOwner(ctx context.Context, o work.Owner, name string, out any, arg any) error {
	ownerWF := ownerWorkflowID(o.ID())
	startOwner := e.c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID: ownerWF, TaskQueue: e.cfg.taskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	}, OwnerWorkflowName, ownerState{Owner: o.ID(), Retain: e.cfg.retain})
	h, err := e.c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: startOwner,
		UpdateOptions: client.UpdateWorkflowOptions{WorkflowID: ownerWF, UpdateName: name,
			WaitForStage: client.WorkflowUpdateStageCompleted, Args: []any{arg}},
	})
	if err == nil {
		err = h.Get(ctx, out)
	}
	return err
}

// refused reports a refused start to the Observer, with the caller's
// context (as work.Supervisor does).
func (e *Engine) refused(ctx context.Context, spec work.Spec, reason, budget string) {
	e.cfg.observer.Event(ctx, work.Event{Type: work.EventRefused, Owner: spec.Owner.ID(), Depth: spec.Owner.Depth(),
		Target: spec.Target.Label, Kind: spec.Target.Kind, Time: time.Now(), ErrorClass: reason, Budget: budget})
}

// refusalOf returns why the owner's registry refused a start: a limit's
// name (work.LimitOutstanding, work.LimitStarts), or
// work.ClassBudgetExhausted with the budget its pool could not cover; ""
// for any other error.
func refusalOf(err error) (reason, budget string) {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || !app.HasDetails() {
		return "", ""
	}
	var detail string
	if app.Details(&detail) != nil {
		return "", ""
	}
	switch app.Type() {
	case errTypePrefix + work.ErrLimit.Code:
		return detail, ""
	case errTypePrefix + work.ErrBudgetExhausted.Code:
		return work.ClassBudgetExhausted, detail
	}
	return "", ""
}

// Call runs a foreground child in this process (see Engine).
func (e *Engine) Call(ctx context.Context, spec work.Spec) (string, error) {
	if spec.Owner.Depth() == 0 && !spec.Owner.IsZero() && e.cfg.maxDepth < 1 {
		return "", work.ErrLimit
	}
	return e.local.Call(ctx, spec)
}

// lookup finds a Work visible to o in o's registry: the registry decides
// visibility (owner, detach, retention) and holds the state.
func (e *Engine) lookup(o work.Owner, id string) (ownerRecord, error) {
	if err := validOwner(o); err != nil {
		return ownerRecord{}, err
	}
	if !work.IsID(id) {
		return ownerRecord{}, work.ErrNotFound
	}
	recs, err := e.records(o)
	if err != nil {
		return ownerRecord{}, err
	}
	for _, r := range recs {
		if r.ID == id {
			return r, nil
		}
	}
	return ownerRecord{}, work.ErrNotFound
}

// Status returns the projection of one Work visible to o.
func (e *Engine) Status(o work.Owner, id string) (work.Status, error) {
	r, err := e.lookup(o, id)
	if err != nil {
		return work.Status{}, err
	}
	st := r.status()
	if r.State == work.StateRunning || r.State == work.StateCancelRequested {
		st.Progress = e.progress(id)
	}
	return st, nil
}

// progress reads a running Work's progress counts from its attempt's last
// heartbeat (zero when there is none yet, or when the heartbeat's payload
// does not decode with the default data converter, as under a codec).
func (e *Engine) progress(id string) work.Progress {
	ctx, cancel := e.rpc()
	defer cancel()
	d, err := e.c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return work.Progress{}
	}
	for _, a := range d.GetPendingActivities() {
		if det := a.GetHeartbeatDetails(); det != nil && len(det.GetPayloads()) > 0 {
			var p work.Progress
			if converter.GetDefaultDataConverter().FromPayloads(det, &p) == nil {
				return p
			}
		}
	}
	return work.Progress{}
}

func (e *Engine) records(o work.Owner) ([]ownerRecord, error) {
	if err := validOwner(o); err != nil {
		return nil, err
	}
	// The registry answers through a worker: a query that reached a worker
	// that died (its sticky queue) fails or times out, the next one goes to
	// a live worker.
	var v converter.EncodedValue
	var err error
	for try := 1; ; try++ {
		ctx, cancel := e.rpc()
		v, err = e.c.QueryWorkflow(ctx, ownerWorkflowID(o.ID()), "", queryRecords)
		cancel()
		if err == nil || try == queryTries || !transient(err) {
			break
		}
	}
	if err != nil {
		if errors.Is(fromTemporal(err), work.ErrNotFound) {
			return nil, nil
		}
		return nil, fromTemporal(err)
	}
	var recs []ownerRecord
	if err := v.Get(&recs); err != nil {
		return nil, err
	}
	return recs, nil
}

// queryTries bounds the tries of a registry query.
const queryTries = 3

// transient reports whether err is a call that was cut off (cancelled,
// timed out, unavailable) rather than an answer.
func transient(err error) bool {
	var (
		canceled *serviceerror.Canceled
		deadline *serviceerror.DeadlineExceeded
		unavail  *serviceerror.Unavailable
	)
	return errors.As(err, &canceled) || errors.As(err, &deadline) || errors.As(err, &unavail) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

func (r ownerRecord) status() work.Status {
	return work.Status{Work: work.Ref{ID: r.ID, TargetID: r.TargetID, Durable: true}, TargetLabel: r.Label,
		State: r.State, Attempt: max(r.Attempt, 1), CreatedAt: r.Created, StartedAt: r.Started,
		FinishedAt: r.Finished, ResultAvailable: r.HasResult, ResultRead: r.Read, BudgetExhausted: r.Budget,
		Progress: r.Progress}
}

// List returns at most work.MaxListed Works visible to o, unfinished first,
// then finished, newest first within each group.
func (e *Engine) List(o work.Owner) ([]work.Status, error) {
	recs, err := e.records(o)
	if err != nil {
		return nil, err
	}
	sort.Slice(recs, func(i, j int) bool {
		a, b := recs[i], recs[j]
		if at, bt := a.State.Terminal(), b.State.Terminal(); at != bt {
			return !at
		}
		return a.Seq > b.Seq
	})
	recs = recs[:min(len(recs), work.MaxListed)]
	out := make([]work.Status, len(recs))
	for i, r := range recs {
		out[i] = r.status()
	}
	return out, nil
}

func (r ownerRecord) priority() int {
	switch r.State {
	case work.StateCompleted:
		if r.HasResult && !r.Read {
			return 0
		}
		return 4
	case work.StateFailed:
		return 1
	case work.StateRunning, work.StateCancelRequested:
		return 2
	case work.StateQueued:
		return 3
	}
	return 4
}

// Rows returns the status-block rows of o, as work.Supervisor.Rows.
func (e *Engine) Rows(o work.Owner) ([]work.Row, int) {
	if o.IsZero() {
		return nil, 0
	}
	recs, err := e.records(o)
	if err != nil || len(recs) == 0 {
		return nil, 0
	}
	sort.Slice(recs, func(i, j int) bool {
		a, b := recs[i], recs[j]
		if pa, pb := a.priority(), b.priority(); pa != pb {
			return pa < pb
		}
		return a.Seq > b.Seq
	})
	now := time.Now()
	n := min(len(recs), work.MaxRows)
	rows := make([]work.Row, n)
	for i, r := range recs[:n] {
		from := r.Started
		if from.IsZero() {
			from = r.Created
		}
		to := now
		if !r.Finished.IsZero() {
			to = r.Finished
		}
		rows[i] = work.Row{ID: r.ID, TargetLabel: r.Label, State: r.State, Elapsed: max(to.Sub(from), 0),
			ResultAvailable: r.HasResult}
	}
	return rows, len(recs) - n
}

// Result returns the exact output of completed Work, else waits (up to the
// capped timeout, or ctx) for the Work to settle, as work.Supervisor.Result.
// The output is the Work workflow's result, read from Temporal: a result
// that completed while this process was down is read the same way.
func (e *Engine) Result(ctx context.Context, o work.Owner, id string, timeout time.Duration) (work.Status, string, error) {
	if timeout < 0 {
		return work.Status{}, "", work.ErrInvalidTimeout
	}
	timeout = min(timeout, work.MaxResultWait)
	r, err := e.lookup(o, id)
	if err != nil {
		return work.Status{}, "", err
	}
	var res workOutcome
	if !r.State.Terminal() && timeout > 0 {
		wctx, wcancel := context.WithTimeout(ctx, timeout)
		err := e.c.GetWorkflow(wctx, id, "").Get(wctx, &res)
		wcancel()
		switch {
		case err == nil && res.Final != nil && res.Final.Detached:
			// Detached or released while awaited, before it ended: its
			// owner no longer sees it (as in-process).
			return work.Status{}, "", work.ErrNotFound
		case err == nil && res.Final != nil:
			// The Work ended while awaited: its outcome says what the
			// registry now holds.
			r.take(*res.Final)
		default:
			res = workOutcome{}
			if r, err = e.lookup(o, id); err != nil {
				return work.Status{}, "", err
			}
		}
	}
	if r.State != work.StateCompleted || !r.HasResult {
		return r.status(), "", nil
	}
	gctx, gcancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.rpcTimeout)
	defer gcancel()
	if res.Final == nil {
		if err := e.c.GetWorkflow(gctx, id, "").Get(gctx, &res); err != nil {
			return work.Status{}, "", fromTemporal(err)
		}
	}
	if !r.Read {
		// For the status block's priority: the result has been read.
		_ = tellOwner(gctx, e.c, ownerWorkflowID(o.ID()), updateRead, id)
		e.cfg.observer.Event(context.Background(), work.Event{Type: work.EventResultRead, WorkID: id,
			Owner: o.ID(), Depth: o.Depth(), Target: r.Label, Kind: r.Kind, Time: time.Now(), Bytes: len(res.Output)})
	}
	return r.status(), res.Output, nil
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

var errWorkflowClosed = errors.New("temporal: workflow closed")

// Cancel asks for a Work to stop, as work.Supervisor.Cancel. A running
// child learns it through its heartbeat (cooperative cancellation).
func (e *Engine) Cancel(o work.Owner, id string) (work.CancelReceipt, error) {
	rec, err := e.lookup(o, id)
	if err != nil {
		return work.CancelReceipt{}, err
	}
	if rec.State.Terminal() {
		return work.CancelReceipt{WorkID: id, State: rec.State, AcceptedAt: time.Now()}, nil
	}
	ctx, cancel := e.rpc()
	defer cancel()
	var r cancelReply
	if err := e.update(ctx, id, updateCancel, &r, o.ID()); err != nil {
		if errors.Is(err, errWorkflowClosed) {
			if rec, err = e.lookup(o, id); err != nil {
				return work.CancelReceipt{}, err
			}
			return work.CancelReceipt{WorkID: id, State: rec.State, AcceptedAt: time.Now()}, nil
		}
		return work.CancelReceipt{}, err
	}
	return work.CancelReceipt{WorkID: id, Accepted: r.Accepted, State: r.State, AcceptedAt: r.At}, nil
}

// Detach hides a Work from o without cancelling it.
func (e *Engine) Detach(o work.Owner, id string) (work.DetachReceipt, error) {
	rec, err := e.lookup(o, id)
	if err != nil {
		return work.DetachReceipt{}, err
	}
	ctx, cancel := e.rpc()
	defer cancel()
	if !rec.State.Terminal() {
		err = e.update(ctx, id, updateDetach, nil, o.ID())
		if err == nil {
			return work.DetachReceipt{ID: id}, nil
		}
		if !errors.Is(err, errWorkflowClosed) {
			return work.DetachReceipt{}, err
		}
	}
	// A finished Work: its owner forgets it. Its workflow has closed (or
	// is closing), so the detach is reported here, as in-process.
	if err := tellOwner(ctx, e.c, ownerWorkflowID(o.ID()), updateDetached, id); err != nil {
		return work.DetachReceipt{}, fromTemporal(err)
	}
	e.cfg.observer.Event(context.Background(), work.Event{Type: work.EventDetached, WorkID: id,
		Owner: o.ID(), Depth: o.Depth(), Target: rec.Label, Kind: rec.Kind, Time: time.Now()})
	return work.DetachReceipt{ID: id}, nil
}

// Send queues guidance for a running agent child, as work.Supervisor.Send;
// the child takes it at its next model boundary. The text is the input of
// a holder workflow of its own (agentwork.Guidance), never in the Work's
// history; the holder deletes its execution, history included, once the
// child has taken the text, the Work ended without taking it, or the
// message was refused or is a repeated command, and at the latest a week
// and the maximum duration after it was sent (a safety net). Configure a
// payload codec on the client to encrypt it meanwhile.
func (e *Engine) Send(o work.Owner, id, commandID, message string) (work.SendReceipt, error) {
	if err := validOwner(o); err != nil {
		return work.SendReceipt{}, err
	}
	if strings.TrimSpace(message) == "" {
		return work.SendReceipt{}, work.ErrEmptyMessage
	}
	if len(message) > work.DefaultMaxMessageBytes {
		return work.SendReceipt{}, work.ErrMessageTooLarge
	}
	rec, err := e.lookup(o, id)
	if err != nil {
		return work.SendReceipt{}, err
	}
	if rec.Kind != work.KindAgent {
		return work.SendReceipt{}, work.ErrNotAgent
	}
	req := sendRequest{Owner: o.ID(), Bytes: len(message)}
	d := sha256.Sum256([]byte(message))
	req.Digest = hex.EncodeToString(d[:])
	if commandID != "" {
		c := sha256.Sum256([]byte(commandID))
		req.Command = hex.EncodeToString(c[:])
	}
	ctx, cancel := e.rpc()
	defer cancel()
	var r sendReply
	if !rec.State.Terminal() {
		// The holder first: once the Work has the reference, the text must
		// exist. A holder the Work did not keep is told it is done.
		req.Ref = guidanceWorkflowID(id)
		ttl := guidanceTTL + e.cfg.maxDuration
		_, err = e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: req.Ref, TaskQueue: e.cfg.taskQueue},
			GuidanceWorkflowName, guidanceInput{Text: message, TTL: ttl})
		if err != nil {
			return work.SendReceipt{}, fromTemporal(err)
		}
		err = e.update(ctx, id, updateSend, &r, req)
		if err != nil || r.Ref != req.Ref {
			sctx, scancel := e.rpc()
			_ = e.c.SignalWorkflow(sctx, req.Ref, "", signalDone, nil)
			scancel()
		}
	}
	if rec.State.Terminal() || errors.Is(err, errWorkflowClosed) {
		// The workflow has ended: a replay still gets its receipt.
		if req.Command == "" {
			return work.SendReceipt{}, work.ErrTerminal
		}
		v, qerr := e.c.QueryWorkflow(ctx, id, "", queryCommand, req.Command)
		if qerr != nil {
			return work.SendReceipt{}, fromTemporal(qerr)
		}
		var c commandRecord
		if qerr := v.Get(&c); qerr != nil {
			return work.SendReceipt{}, qerr
		}
		switch {
		case c.Digest == "":
			return work.SendReceipt{}, work.ErrTerminal
		case c.Digest != req.Digest:
			return work.SendReceipt{}, work.ErrConflict
		}
		r, err = c.Reply, nil
	}
	if err != nil {
		return work.SendReceipt{}, err
	}
	cursor := strconv.Itoa(r.Cursor)
	return work.SendReceipt{WorkID: id, ID: id + "." + cursor, Cursor: cursor, AcceptedAt: r.At}, nil
}

// Release detaches all of o's visible Work, cancels the unfinished part
// and forgets o (its starts included).
func (e *Engine) Release(o work.Owner) {
	if o.IsZero() {
		return
	}
	ctx, cancel := e.rpc()
	defer cancel()
	_ = e.update(ctx, ownerWorkflowID(o.ID()), updateRelease, nil)
	e.local.Release(o)
}

// SetPool gives the top-level owner o a pool, as work.Supervisor.SetPool:
// each Work o starts reserves its budget from it at admission, in o's
// registry (so the pool holds across every coordinator process), and is
// refunded what it did not spend when it settles. A Work whose attempt
// died with its worker is charged its whole reservation (its usage is
// unknown). Work started by a child (a deeper scope) does not reserve from
// it. Release forgets the pool.
func (e *Engine) SetPool(o work.Owner, b work.Budget) error {
	if err := validOwner(o); err != nil {
		return err
	}
	if o.Depth() > 0 {
		return work.ErrInvalidOwner.Detail("a child's scope has no pool of its own")
	}
	ctx, cancel := e.rpc()
	defer cancel()
	return fromTemporal(e.updateOwner(ctx, o, updatePool, nil, dims(b)))
}

// fromTemporal maps Temporal's errors to the engine's.
func fromTemporal(err error) error {
	if err == nil {
		return nil
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) && strings.HasPrefix(app.Type(), errTypePrefix) {
		code := strings.TrimPrefix(app.Type(), errTypePrefix)
		for _, we := range engineErrors {
			if we.Code == code {
				msg := app.Message()
				if d, ok := strings.CutPrefix(msg, we.Error()+": "); ok {
					return we.Detail(d)
				}
				return we
			}
		}
	}
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		// The server answers an update to a Work workflow that closed
		// after the owner's registry was read (or while the update was
		// in flight) with NotFound too: that Work is terminal, not
		// unknown. Its callers read its terminal state instead.
		if slices.Contains(closedMessages, nf.Message) {
			return errWorkflowClosed
		}
		return work.ErrNotFound
	}
	return err
}

// closedMessages are the server's NotFound messages for an update to a
// closed workflow (go.temporal.io/server: consts.ErrWorkflowCompleted and
// update.AbortedByWorkflowClosingErr).
var closedMessages = []string{"workflow execution already completed", "workflow update was aborted by closing workflow"}

var engineErrors = []*work.Error{work.ErrNotFound, work.ErrInvalidOwner, work.ErrInvalidSpec,
	work.ErrEmptyMessage, work.ErrNotAgent, work.ErrTerminal, work.ErrConflict, work.ErrLimit,
	work.ErrMessageTooLarge, work.ErrMailboxFull, work.ErrBudgetExhausted}

// Settled returns every terminal Work visible to o, oldest settlement
// first, as work.Supervisor.Settled.
func (e *Engine) Settled(o work.Owner) ([]work.Status, error) {
	recs, err := e.records(o)
	if err != nil {
		return nil, err
	}
	var term []ownerRecord
	for _, r := range recs {
		if r.State.Terminal() {
			term = append(term, r)
		}
	}
	sort.SliceStable(term, func(i, j int) bool { return term[i].Finished.Before(term[j].Finished) })
	out := make([]work.Status, len(term))
	for i, r := range term {
		out[i] = r.status()
	}
	return out, nil
}

// Live reports whether o has visible Work that is not terminal (false when
// o's registry cannot be read).
func (e *Engine) Live(o work.Owner) bool {
	recs, _ := e.records(o)
	for _, r := range recs {
		if !r.State.Terminal() {
			return true
		}
	}
	return false
}
