package temporal

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// Child is a child a Worker runs, registered under its target label: its
// kind and its body, called with the Work's input. Its context carries a work.Execution (guidance at each
// model boundary, the child's own scope) and is cancelled when the Work is
// cancelled (the cancellation arrives through the attempt's heartbeat) or
// its deadline passes.
//
// A Child has either Run or Job. Job makes it an external job (Kind must
// be work.KindFunction; NewWorker checks it with work.Job.Validate): its
// Submit runs holding one of the Worker's running slots, its Await and
// Cancel on the target's poll queue, at most Job.MaxPolls at once on this
// Worker (default 8, work.Job.MaxPolls). The coordinator's Spec.Job says
// that a Work is a job and carries its Backoff and MaxPollErrors; the
// Worker's Job is what runs.
type Child struct {
	Kind observe.Kind
	Run  func(ctx context.Context, input string) (string, error)
	Job  *work.Job
}

// Worker runs the runner's workflows and the attempts of the targets it
// registered. Every deployment needs at least one Worker; a coordinator
// may run one with no targets (it then runs workflows only). Workers of
// one deployment may register different targets: an attempt runs on a
// Worker that registered its target.
type Worker struct {
	c       client.Client
	cfg     config
	targets map[string]Child
	workers []worker.Worker
	slots   *driver.Slots   // the attempts in progress (Snapshot); nil for a Worker not made by NewWorker
	watch   driver.Watching // the Observer's, from Start to Stop

	// The attempts a Rejoin may take back (rejoin.go): the Worker's own
	// rejoin queue, its held attempts, the watches of those adrift.
	rejoinQueue string
	held        driver.Held[*heldAttempt]
	adrift      driver.Adrift
}

// own returns w's slots: nil for a Worker not made by NewWorker (zero or
// nil).
func (w *Worker) own() *driver.Slots {
	if w == nil {
		return nil
	}
	return w.slots
}

// NewWorker returns a Worker for targets (keyed by label) on c. Start it
// with Start. An invalid option or target is refused first, then a nil c
// (work.ErrUnavailable).
func NewWorker(c client.Client, targets map[string]Child, opts ...Option) (*Worker, error) {
	w := &Worker{c: c, cfg: newConfig(opts), targets: map[string]Child{}}
	if w.cfg.Err != nil {
		return nil, fmt.Errorf("temporal: %w", w.cfg.Err)
	}
	for label, t := range targets {
		if err := driver.ValidTarget(label, t.Kind, t.Run != nil, t.Job); err != nil {
			return nil, fmt.Errorf("temporal: %w", err)
		}
		w.targets[label] = t
	}
	if c == nil {
		return nil, fmt.Errorf("temporal: %w", errNoClient)
	}
	w.slots = driver.NewSlots(slices.Collect(maps.Keys(w.targets)), w.cfg.Limits.MaxRunning)
	// The SDK's sticky schedule-to-start timeout (5 s) moves the tasks and
	// queries of workflows cached by a worker that died to a live worker
	// within seconds. The workflow queue runs workflows and the guidance
	// holders' local activity, never an ordinary activity: no activity
	// pollers there.
	wf := worker.New(c, w.cfg.taskQueue, worker.Options{LocalActivityWorkerOnly: true})
	wf.RegisterWorkflowWithOptions(workWorkflow(w.cfg.Limits.Observer, w.cfg.dc), workflow.RegisterOptions{Name: WorkWorkflowName})
	wf.RegisterWorkflowWithOptions(ownerWorkflow, workflow.RegisterOptions{Name: OwnerWorkflowName})
	wf.RegisterWorkflowWithOptions(guidanceWorkflow, workflow.RegisterOptions{Name: GuidanceWorkflowName})
	wf.RegisterActivityWithOptions(deleteSelf(c), activity.RegisterOptions{Name: deleteSelfName})
	wf.RegisterActivityWithOptions(tellOwnerActivity(c), activity.RegisterOptions{Name: tellOwnerName})
	wf.RegisterActivityWithOptions(workExists(c), activity.RegisterOptions{Name: describeWorkName})
	wf.RegisterWorkflowWithOptions(approvalsWorkflow, workflow.RegisterOptions{Name: ApprovalsWorkflowName})
	wf.RegisterActivityWithOptions(tellApprovalsActivity(c), activity.RegisterOptions{Name: tellApprovalsName})
	w.workers = append(w.workers, wf)
	for label, t := range w.targets {
		aw := w.activityWorker(activityQueue(w.cfg.taskQueue, label), w.cfg.Limits.MaxRunning)
		aw.RegisterActivityWithOptions(w.run, activity.RegisterOptions{Name: RunActivityName})
		if t.Job != nil {
			w.registerJob(aw, label, t.Job)
		}
	}
	if len(w.targets) > 0 {
		w.rejoinQueue = rejoinQueueName(w.cfg.taskQueue)
		// An activity worker of its own takes only the Rejoins of this
		// Worker's attempts (rejoin.go).
		w.activityWorker(w.rejoinQueue, 0).RegisterActivityWithOptions(w.rejoin, activity.RegisterOptions{Name: rejoinActivityName})
	}
	return w, nil
}

// activityWorker adds to the Worker's workers one for the activities of
// queue, running at most size of them at once (0: the SDK's default),
// its heartbeats throttled to a fifth of the heartbeat timeout (50 ms at
// least), with no workflow worker.
func (w *Worker) activityWorker(queue string, size int) worker.Worker {
	hbThrottle := max(w.cfg.heartbeatTimeout/5, 50*time.Millisecond)
	aw := worker.New(w.c, queue, worker.Options{
		MaxConcurrentActivityExecutionSize: size,
		DefaultHeartbeatThrottleInterval:   hbThrottle,
		MaxHeartbeatThrottleInterval:       hbThrottle,
		DisableWorkflowWorker:              true,
	})
	w.workers = append(w.workers, aw)
	return aw
}

// Start starts polling. It fails if a poller cannot start. When the
// Observer (WithObserver) is an observe.Watcher (the telemetry Observer is),
// Start has it watch the Worker's slots (Snapshot) until Stop. A Worker
// not made by NewWorker (zero or nil) answers work.ErrNotInitialized.
func (w *Worker) Start() error {
	if w.own() == nil {
		return work.ErrNotInitialized
	}
	for i, x := range w.workers {
		if err := x.Start(); err != nil {
			for _, y := range w.workers[:i] {
				y.Stop()
			}
			return err
		}
	}
	w.watch.Start(w.cfg.Limits.Observer, w)
	return nil
}

// Stop stops polling and waits for the attempts in progress (their
// contexts are cancelled after the workers' stop timeout); the Observer
// stops watching the Worker. On a Worker not made by NewWorker it does
// nothing.
func (w *Worker) Stop() {
	if w.own() == nil {
		return
	}
	w.adrift.Stop()
	var wg sync.WaitGroup
	for _, x := range w.workers {
		wg.Go(x.Stop)
	}
	wg.Wait()
	w.adrift.Wait()
	w.watch.Stop()
}

// run is one attempt of a Work: announce it, run the child with a
// heartbeat, and report the output or a class (never failure text).
func (w *Worker) run(ctx context.Context, in runInput) (runOutcome, error) {
	t, ok := w.targets[in.Label]
	if !ok {
		return runOutcome{}, fmt.Errorf("temporal: this worker has no target %q", in.Label)
	}
	if t.Run == nil { // a job target started as a Run: the deployment disagrees on it
		return runOutcome{Class: work.ClassError}, nil
	}
	info := activity.GetInfo(ctx)
	// The attempt holds one of its target's slots here until it returns
	// (Snapshot); the cancel is recorded as it arrives.
	slot := &driver.Attempt{ID: in.ID, Owner: in.Owner, Label: in.Label, Kind: in.Kind, Depth: in.Depth,
		N: int(info.Attempt), Created: info.ScheduledTime, Started: info.StartedTime}
	defer w.slots.Add(slot)()
	// parent ends with the attempt's context, except when the server was
	// lost: the child then runs on, held for a Rejoin (rejoin.go).
	held, parent, release := w.hold(ctx, in.ID, int(info.Attempt))
	var res runOutcome
	defer func() { release(res) }()
	stopCancelAt := context.AfterFunc(parent, func() { w.slots.Cancelled(slot, time.Now()) })
	defer stopCancelAt()
	// Heartbeats keep the attempt alive and bring cancellation. The
	// heartbeat timeout runs from the attempt's start: the periodic beats
	// (every third of the timeout) start now, not after the started update
	// (which may take longer than the timeout on a loaded machine), and
	// they go on while a cancelled child finishes (a completion may still
	// win the cancel race). None goes at the start itself: a cancel before
	// the attempt began reaches it through the started update, and each
	// beat is a billable action, so an attempt shorter than a third of the
	// timeout sends none. Each carries the child's progress counts
	// (Engine.Status reads them).
	//
	// They are recorded on hbCtx, the attempt's context without its
	// cancellation: the SDK derives each heartbeat's RPC from the context
	// it is given, so on ctx, done once the cancel has arrived, no later
	// heartbeat would reach the server and Temporal would time out a
	// cancelled attempt whose child is still finishing. The cancel itself
	// still arrives: the SDK cancels ctx when a heartbeat's response asks
	// for it, whatever context the heartbeat was recorded on.
	//
	// Each also names the Worker's rejoin queue, where the Work's workflow
	// asks for the attempt should the server time it out (rejoin.go).
	heartbeat := func() { held.heartbeat(w.slots.Progress(slot), w.rejoinQueue) }
	defer w.beat(heartbeat)()
	// The started update is applied once per attempt (a repeat answers
	// as the first): a call the server was too slow to answer is tried
	// again, while the attempt lasts (heartbeats keep it alive and bring
	// a cancel), not taken for the child's failure.
	var started startedReply
	if err := retry(ctx, w.cfg.RPCTimeout, 0, func(ctx context.Context) error {
		return update(ctx, w.c, in.ID, updateStarted, &started, int(info.Attempt))
	}); err != nil {
		if lostContact(ctx) {
			return runOutcome{Class: work.ClassWorkerLost}, nil
		}
		return runOutcome{}, err
	}
	if !started.Run {
		res = runOutcome{Class: classNotRun}
		return res, nil
	}
	// The owner's registry shows the attempt running before the child
	// runs; if it cannot be told now, it is told while the child runs.
	stopAnnounce := w.announce(parent, started)
	defer stopAnnounce()
	child, cancel, stop := driver.AttemptContext(ctx, parent, in.MaxDuration)
	defer cancel(nil)
	defer stop()
	// Progress goes to this Worker's Observer as it is reported (none
	// after the child returned); the budget that ran out and the usage
	// travel in the outcome, and the Work's workflow reports them, on the
	// Work's span, before its terminal event.
	var seen sendsSeen // the attempt's boundaries, one at a time
	out, panicked, ex, err := w.slots.Run(child, slot, w.cfg.Limits.Observer, driver.Remote{WorkID: in.ID, OwnerID: in.Owner, OwnerDepth: in.Depth,
		Budget: in.Budget, FailOnBudget: in.FailOnBudget,
		Guidance: func() []string {
			heartbeat()
			if parent.Err() != nil {
				// The boundary's heartbeat may bring the cancel: the
				// child's context is done before its request goes out.
				cancel(context.Cause(parent))
				return nil
			}
			return w.takeGuidance(parent, in.ID, &seen)
		},
		Update: w.reportUpdate(parent, in), AwaitAnswer: w.awaitAnswer(in.ID)}, t.Run, in.Input) // worker_updates.go
	res = outcome(child, parent, in, out, err, panicked, ex)
	if errors.Is(context.Cause(parent), driver.ErrUnreachable) {
		res = runOutcome{Class: driver.ClassUnreachable, Usage: res.Usage, Progress: res.Progress}
	}
	return res, nil
}

// announce sends the started record of an attempt to the owner's
// registry (ctx is the attempt's). A registry that is gone (released) is
// not told. If the update fails, it is sent again, with a growing delay,
// until it is recorded or the attempt ends (its workflow then sends a
// later record): the registry must not show a running Work queued. The
// returned function stops the retries and waits for them.
func (w *Worker) announce(ctx context.Context, r startedReply) (stop func()) {
	send := func(ctx context.Context) bool {
		sctx, cancel := context.WithTimeout(ctx, w.cfg.RPCTimeout)
		defer cancel()
		return tellOwner(sctx, w.c, r.Owner, updateRecord, r.Record) == nil
	}
	if send(ctx) {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for delay := announceDelay; ; delay = min(2*delay, maxAnnounceDelay) {
			t := time.NewTimer(delay)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			if send(ctx) {
				return
			}
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}

// The delays between the tries of a started record: the first, and the
// most.
const (
	announceDelay    = 100 * time.Millisecond
	maxAnnounceDelay = 10 * time.Second
)

// lostContact reports whether the attempt's context ended for another
// reason than a cancel the Work's workflow asked for: the SDK cancels it
// when a heartbeat could not reach the server within the heartbeat
// timeout (it takes the attempt for timed out) or the Worker stops. The
// attempt then ends as worker_lost, not as a cancelled child (which,
// with no cancel requested, would fail the Work as error).
func lostContact(ctx context.Context) bool {
	var asked *temporal.CanceledError
	return ctx.Err() != nil && !errors.As(context.Cause(ctx), &asked)
}

// outcome maps a child's return to the attempt's outcome
// (driver.Classify): a class, never the failure's text; the output only
// when the child completed.
func outcome(child, ctx context.Context, in runInput, out string, err error, panicked bool, ex *work.Execution) runOutcome {
	c := driver.Classify(child, ctx.Err() != nil, in.MaxResultBytes, out, err, panicked, ex)
	if c.Class == work.ClassCancelled && lostContact(ctx) {
		c.Class = work.ClassWorkerLost
	}
	res := runOutcome{Class: c.Class, Usage: c.Usage, Budget: c.Budget, Progress: c.Progress}
	switch c.Class {
	case "":
		res.Output = out
	case work.ClassResultTooLarge:
		res.Bytes = c.Bytes
	}
	return res
}

// takeGuidance is the child's boundary: when the Work's history has a
// send accepted since the last boundary that took all it found (seen),
// it reads the texts of the guidance queued for Work id from their
// holders, marks them taken, and deletes the holders (a deletion is no
// billable action; a holder left by a failed one deletes itself when its
// TTL runs out). Any failure before the mark leaves the guidance queued
// for the next boundary. A boundary with no send since costs a history
// read, which is not a billable action, instead of the drain update.
func (w *Worker) takeGuidance(ctx context.Context, id string, seen *sendsSeen) []string {
	newest, sent := w.sendsSince(ctx, seen)
	if !sent {
		seen.upTo(newest)
		return nil
	}
	var refs []string
	if err := w.update(ctx, id, updateDrain, &refs); err != nil {
		return nil
	}
	if len(refs) == 0 {
		seen.upTo(newest)
		return nil
	}
	msgs := make([]string, 0, len(refs))
	taken := 0
	for _, ref := range refs {
		qctx, cancel := context.WithTimeout(ctx, w.cfg.RPCTimeout)
		v, err := w.c.QueryWorkflow(qctx, ref, "", queryText)
		var text string
		if err == nil {
			err = v.Get(&text)
		}
		cancel()
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			taken++ // its holder is gone (its safety net ran out): skipped
			continue
		}
		if err != nil {
			break // the rest waits for the next boundary, in order
		}
		msgs = append(msgs, text)
		taken++
	}
	if taken == 0 || w.update(ctx, id, updateAck, nil, taken) != nil {
		return nil
	}
	if taken == len(refs) {
		seen.upTo(newest)
	}
	ns := activity.GetInfo(ctx).Namespace
	for _, ref := range refs[:taken] {
		sctx, cancel := context.WithTimeout(ctx, w.cfg.RPCTimeout)
		_, _ = w.c.WorkflowService().DeleteWorkflowExecution(sctx, &workflowservice.DeleteWorkflowExecutionRequest{
			Namespace: ns, WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: ref}})
		cancel()
	}
	return msgs
}

// sendsSeen is how far an attempt's boundaries have read its Work's
// history: every send accepted up to event last has been taken.
type sendsSeen struct {
	mu   sync.Mutex
	last int64
}

// upTo records that every send accepted up to event id has been taken.
func (s *sendsSeen) upTo(id int64) {
	s.mu.Lock()
	s.last = max(s.last, id)
	s.mu.Unlock()
}

// sendsSince reads the attempt's Work's history back from its newest
// event to the one after seen's, and reports whether a send update was
// accepted there, with the newest event's id. A read that fails, and a
// run continued from another (whose sends are in the run before), report
// a send: the boundary then drains, as it would without this check.
func (w *Worker) sendsSince(ctx context.Context, seen *sendsSeen) (newest int64, sent bool) {
	seen.mu.Lock()
	last := seen.last
	seen.mu.Unlock()
	info := activity.GetInfo(ctx)
	req := &workflowservice.GetWorkflowExecutionHistoryReverseRequest{Namespace: info.Namespace,
		Execution:       &commonpb.WorkflowExecution{WorkflowId: info.WorkflowExecution.ID, RunId: info.WorkflowExecution.RunID},
		MaximumPageSize: sendsPage}
	for {
		rctx, cancel := context.WithTimeout(ctx, w.cfg.RPCTimeout)
		resp, err := w.c.WorkflowService().GetWorkflowExecutionHistoryReverse(rctx, req)
		cancel()
		if err != nil {
			return last, true
		}
		for _, e := range resp.GetHistory().GetEvents() {
			if newest == 0 {
				newest = e.GetEventId()
			}
			if e.GetEventId() <= last {
				return newest, sent
			}
			if a := e.GetWorkflowExecutionUpdateAcceptedEventAttributes(); a != nil &&
				a.GetAcceptedRequest().GetInput().GetName() == updateSend {
				sent = true
			}
			if a := e.GetWorkflowExecutionStartedEventAttributes(); a != nil && a.GetContinuedExecutionRunId() != "" {
				sent = true
			}
		}
		if req.NextPageToken = resp.GetNextPageToken(); len(req.NextPageToken) == 0 {
			return newest, sent
		}
	}
}

// sendsPage is the page size of a boundary's history read: a boundary
// usually reads the few events since the last one.
const sendsPage = 32

func (w *Worker) update(ctx context.Context, id, name string, out any, args ...any) error {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.RPCTimeout)
	defer cancel()
	return update(ctx, w.c, id, name, out, args...)
}

const tellOwnerName = "agentwork.TellOwner"

// tellOwnerActivity sends update name with arg to the owner registry
// workflow id, for a Work's workflow (a local activity: arg is passed as
// it is, not encoded).
func tellOwnerActivity(c client.Client) func(ctx context.Context, id, name string, arg any) error {
	return func(ctx context.Context, id, name string, arg any) error { return tellOwner(ctx, c, id, name, arg) }
}

// tellOwner sends update name with arg to the owner registry workflow id
// and waits until the registry has applied it. A registry that is gone
// (released) is not an error.
func tellOwner(ctx context.Context, c client.Client, id, name string, arg any) error {
	err := update(ctx, c, id, name, nil, arg)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil
	}
	return err
}
