package temporal

import (
	"errors"
	"slices"
	"strconv"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentwork/agentwork/work"
)

// Names of the workflows, activity, updates, signals and queries: they are
// part of the runner's wire format and must not change between the
// coordinators and workers of one deployment.
const (
	WorkWorkflowName  = "agentwork.Work"
	OwnerWorkflowName = "agentwork.Owner"
	RunActivityName   = "agentwork.Run"

	updateAdmit   = "admit"
	updateRelease = "release"
	updateStarted = "started"
	updateCancel  = "cancel"
	updateDetach  = "detach"
	updateSend    = "send"
	updateDrain   = "drain"
	updateAck     = "ack"
	updatePool    = "pool"
	// The registry's inputs from Work workflows, workers and coordinators
	// are updates: an update's workflow task is handed to the worker at
	// once, while a signal's waits in the server's task queue (about 45 ms
	// on temporaltest) and holds up an admission that arrives meanwhile.
	updateRecord   = "record"    // a Work's transition record
	updateRead     = "mark-read" // a Work's result was read
	updateDetached = "detached"  // a Work was detached
	updateForget   = "forget"    // a Work whose workflow did not start

	signalRelease = "release-cancel"

	queryStatus  = "status"
	queryRecords = "records"
	queryCommand = "command"

	errTypePrefix = "agentwork:"
)

// The outcome classes of an attempt that are not failures.
const (
	classCancelled = "cancelled"
	classNotRun    = "not_run"
)

// workInput starts one Work workflow. It holds the child's input: the
// child's run needs it on the worker.
type workInput struct {
	ID, Owner        string
	Depth            int
	Label, TargetID  string
	Kind             work.Kind
	Input            string
	TaskQueue        string // the target's activity queue
	OwnerWorkflow    string
	MaxDuration      time.Duration
	MaxResultBytes   int
	MaxAttempts      int // 1 unless the child is retryable
	HeartbeatTimeout time.Duration
	Created          time.Time
	Mailbox          mailboxLimits
	Launch           launchInfo
	Budget           work.Budget // effective: defaults and ceiling applied
	FailOnBudget     bool
}

type mailboxLimits struct {
	Messages, Bytes, Commands int
}

// runInput is the activity's input.
type runInput struct {
	ID, Owner      string
	Depth          int
	Label          string
	Kind           work.Kind
	Input          string
	MaxDuration    time.Duration
	MaxResultBytes int
	Budget         work.Budget
	FailOnBudget   bool
}

// runOutcome is an attempt's result: the output, or a class. Failure text
// never leaves the worker.
type runOutcome struct {
	Output   string
	Class    string
	Bytes    int           `json:",omitempty"` // the output's size, for a result_too_large failure
	Usage    work.Usage    // what the attempt spent
	Budget   string        `json:",omitempty"` // the budget that ran out, if one did
	Progress work.Progress // the child's progress counts when it returned
}

// workOutcome is the Work workflow's result.
type workOutcome struct {
	State  work.State
	Output string
	Class  string
	Bytes  int `json:",omitempty"` // the output's size, for a result_too_large failure
	// Final is the last record the Work sent to its owner's registry (the
	// registry has it before the workflow closes): a coordinator awaiting
	// the result needs not read the registry again. Its Detached says that
	// the owner detached or released the Work before it ended (the
	// registry keeps its own Detached; take leaves it).
	Final *ownerRecord `json:",omitempty"`
}

// workStatus answers the status query.
type workStatus struct {
	Found     bool
	Label     string
	TargetID  string
	Kind      work.Kind
	State     work.State
	Attempt   int
	Created   time.Time
	Started   time.Time
	Finished  time.Time
	HasResult bool
}

type cancelReply struct {
	Accepted bool
	State    work.State
	At       time.Time
}

// sendRequest queues one guidance message: the text itself is in its
// holder workflow (Ref), never in the Work's history.
type sendRequest struct {
	Owner   string
	Command string // SHA-256 of the command id, hex; "" is never deduplicated
	Digest  string // SHA-256 of the text, hex
	Ref     string // the id of the message's holder workflow
	Bytes   int    // the text's size, for the mailbox limit
}

type sendReply struct {
	Cursor int
	At     time.Time
	Ref    string // the holder of the message the command queued
}

// guidanceRef is one queued message: its holder and size.
type guidanceRef struct {
	Ref   string
	Bytes int
}

type commandRecord struct {
	Digest string
	Reply  sendReply
}

// ownerRecord is one Work as its owner's registry keeps it.
type ownerRecord struct {
	ID       string
	Label    string
	TargetID string
	Kind     work.Kind
	State    work.State
	Seq      int64
	// Rev orders a Work's transition signals (its workflow numbers them,
	// see workRun.record): the registry applies a signal only over an
	// older revision, so one that arrives late (the started signal goes
	// from the worker) or again never moves the record back.
	Rev       int64
	Attempt   int
	Created   time.Time
	Started   time.Time
	Finished  time.Time
	HasResult bool
	Read      bool
	Detached  bool
	Budget    string `json:",omitempty"` // the budget that ran out, if one did
	// Progress is a settled Work's last progress counts.
	Progress work.Progress
	// Held is what the Work reserved from its owner's pool.
	Held [numDims]int64
	// Spent is what a terminal Work spent, in its transition signal; nil
	// when unknown (its attempt died with its worker).
	Spent *work.Usage `json:",omitempty"`
}

// take applies what a Work's transition record x says of its state.
func (r *ownerRecord) take(x ownerRecord) {
	r.Rev, r.State, r.Attempt, r.Started, r.Finished, r.HasResult = x.Rev, x.State, x.Attempt, x.Started, x.Finished, x.HasResult
	r.Budget, r.Progress = x.Budget, x.Progress
}

type admitRequest struct {
	Record         ownerRecord
	MaxOutstanding int
	MaxStarts      int
	Retain         int
	// The child's own budget limits (Spec.Budget) and its budget with the
	// defaults and ceiling applied, for the owner's pool.
	Want, Eff [numDims]int64
	Function  bool
	// Launch is the SHA-256 of the launch's identity (Spec.CallID), hex,
	// or ""; Digest is the input's digest (Spec.InputDigest), hex.
	Launch, Digest string
}

// launchRecord is a launch identity an owner used, for repeated launches.
type launchRecord struct {
	Key, Target, Digest string
	ID, TargetID        string
}

// admitReply is an admitted start's sequence number and the budget it
// runs with (its pool applied).
type admitReply struct {
	Seq    int64
	Budget [numDims]int64
	// Replay: the launch identity was used before, with the same target
	// and input: nothing was admitted; ID and TargetID are its Work's.
	Replay       bool
	ID, TargetID string
}

// ownerState is the Owner workflow's state, carried across continue-as-new.
type ownerState struct {
	Owner    string
	Records  []ownerRecord
	Starts   int
	Seq      int64
	Retain   int
	Pool     *pool          `json:",omitempty"`
	Launches []launchRecord `json:",omitempty"` // oldest first, at most work.MaxLaunchRecords
}

// workErr is e as an update's failure; details (content-free, such as a
// limit's name) travel with it.
func workErr(e *work.Error, detail string, details ...any) error {
	msg := e.Error()
	if detail != "" {
		msg = e.Detail(detail).Error()
	}
	return temporal.NewApplicationError(msg, errTypePrefix+e.Code, details...)
}

// workWorkflow returns the Work workflow, reporting to obs: it runs one
// Work, its attempts as activities on the target's queue, its state,
// guidance mailbox and cancellation. Its result is the output (completed
// Work only).
func workWorkflow(obs work.Observer) func(workflow.Context, workInput) (workOutcome, error) {
	return func(ctx workflow.Context, in workInput) (workOutcome, error) {
		return runWork(ctx, in, obs)
	}
}

func runWork(ctx workflow.Context, in workInput, obs work.Observer) (workOutcome, error) {
	w := &workRun{in: in, state: work.StateQueued, commands: map[string]commandRecord{}}
	w.ev = newLifecycle(ctx, obs, in)
	actx, cancelAct := workflow.WithCancel(ctx)
	w.cancelAct = cancelAct
	if err := w.handlers(ctx); err != nil {
		return workOutcome{}, err
	}
	maxDur := in.MaxDuration
	startToClose := 365 * 24 * time.Hour
	if maxDur > 0 {
		startToClose = maxDur + time.Minute
	}
	ao := workflow.ActivityOptions{
		TaskQueue:           in.TaskQueue,
		StartToCloseTimeout: startToClose,
		HeartbeatTimeout:    in.HeartbeatTimeout,
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumAttempts: int32(max(in.MaxAttempts, 1))},
	}
	var out runOutcome
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(actx, ao), RunActivityName, runInput{
		ID: in.ID, Owner: in.Owner, Depth: in.Depth, Label: in.Label, Kind: in.Kind, Input: in.Input,
		MaxDuration: in.MaxDuration, MaxResultBytes: in.MaxResultBytes, Budget: in.Budget,
		FailOnBudget: in.FailOnBudget}).Get(ctx, &out)
	res := w.settle(out, err)
	w.budget, w.progress = out.Budget, out.Progress
	// The attempt's budget and usage, as in-process before the terminal
	// event: the budget that ran out, then what the child spent.
	if out.Budget != "" {
		w.ev.emit(ctx, work.Event{Type: work.EventBudgetExhausted, Budget: out.Budget})
	}
	if out.Usage != (work.Usage{}) {
		w.ev.emit(ctx, work.Event{Type: work.EventUsage, Usage: out.Usage})
	}
	if err == nil {
		w.spent = &out.Usage
	} else if w.attempt == 0 {
		w.spent = &work.Usage{} // it never ran
	}
	w.finish(ctx, res)
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	// The holders of undelivered guidance delete themselves.
	var futs []workflow.Future
	for _, ref := range w.dropped {
		futs = append(futs, workflow.SignalExternalWorkflow(ctx, ref, "", signalDone, nil))
	}
	for _, f := range futs {
		_ = f.Get(ctx, nil)
	}
	res.Final = &w.last
	return res, nil
}

type workRun struct {
	in        workInput
	state     work.State
	attempt   int
	started   time.Time
	finished  time.Time
	hasResult bool
	detached  bool
	cancelAct workflow.CancelFunc
	ev        *lifecycle
	budget    string      // the budget that ran out in the last attempt
	spent     *work.Usage // what the last attempt spent; nil: unknown
	progress  work.Progress
	pending   []guidanceRef
	pendBytes int
	dropped   []string // holders of messages that will never be delivered
	cursor    int
	commands  map[string]commandRecord
	cmdOrder  []string
	rev       int64       // the revision of the last record made for the registry (see record)
	last      ownerRecord // the last record this workflow sent to it
}

func (w *workRun) visible(owner string) bool { return owner == w.in.Owner && !w.detached }

func (w *workRun) handlers(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, queryStatus, func(owner string) (workStatus, error) {
		if !w.visible(owner) {
			return workStatus{}, nil
		}
		return workStatus{Found: true, Label: w.in.Label, TargetID: w.in.TargetID, Kind: w.in.Kind,
			State: w.state, Attempt: max(w.attempt, 1), Created: w.in.Created, Started: w.started,
			Finished: w.finished, HasResult: w.hasResult}, nil
	}); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, queryCommand, func(command string) (commandRecord, error) {
		return w.commands[command], nil
	}); err != nil {
		return err
	}
	// started: an attempt begins. It answers whether the attempt may run
	// and, when it may, the record the attempt's worker signals to the
	// owner's registry before it runs the child (a signal from the worker
	// is recorded in one call; one from this workflow would take two more
	// workflow tasks, here and after its delivery).
	if err := workflow.SetUpdateHandler(ctx, updateStarted, func(ctx workflow.Context, attempt int) (startedReply, error) {
		switch w.state {
		case work.StateQueued, work.StateRunning:
		default:
			return startedReply{}, nil
		}
		w.attempt = attempt
		first := w.started.IsZero()
		if first {
			w.started = workflow.Now(ctx)
		}
		w.state = work.StateRunning
		if first {
			w.ev.transition(ctx, work.StateQueued, work.StateRunning, work.Event{QueueWait: max(w.started.Sub(w.in.Created), 0)})
		}
		return startedReply{Run: true, Owner: w.in.OwnerWorkflow, Record: w.record(ctx)}, nil
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, updateCancel, func(ctx workflow.Context, owner string) (cancelReply, error) {
		return w.cancel(ctx), nil
	}, workflow.UpdateHandlerOptions{Validator: func(owner string) error {
		if !w.visible(owner) {
			return workErr(work.ErrNotFound, "")
		}
		return nil
	}}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, updateDetach, func(ctx workflow.Context, owner string) error {
		w.detached = true
		w.ev.emit(ctx, work.Event{Type: work.EventDetached})
		w.tellOwner(ctx, updateDetached, w.in.ID)
		return nil
	}, workflow.UpdateHandlerOptions{Validator: func(owner string) error {
		if !w.visible(owner) {
			return workErr(work.ErrNotFound, "")
		}
		return nil
	}}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, updateSend, func(ctx workflow.Context, r sendRequest) (sendReply, error) {
		if c, ok := w.commands[r.Command]; ok && r.Command != "" {
			return c.Reply, nil // the validator checked the digest
		}
		w.cursor++
		reply := sendReply{Cursor: w.cursor, At: workflow.Now(ctx), Ref: r.Ref}
		w.pending = append(w.pending, guidanceRef{Ref: r.Ref, Bytes: r.Bytes})
		w.pendBytes += r.Bytes
		w.ev.emit(ctx, work.Event{Type: work.EventGuidanceAccepted, Count: 1})
		if r.Command != "" {
			w.commands[r.Command] = commandRecord{Digest: r.Digest, Reply: reply}
			w.cmdOrder = append(w.cmdOrder, r.Command)
			if n := w.in.Mailbox.Commands; n > 0 && len(w.cmdOrder) > n {
				delete(w.commands, w.cmdOrder[0])
				w.cmdOrder = w.cmdOrder[1:]
			}
		}
		return reply, nil
	}, workflow.UpdateHandlerOptions{Validator: w.validateSend}); err != nil {
		return err
	}
	// drain: the child's boundary takes the guidance accepted so far.
	// drain: the child's boundary reads the holders of the guidance
	// queued so far, in order; ack then takes the first n of them (read).
	// A worker that dies between the two leaves them queued.
	if err := workflow.SetUpdateHandler(ctx, updateDrain, func(ctx workflow.Context) ([]string, error) {
		refs := make([]string, len(w.pending))
		for i, p := range w.pending {
			refs[i] = p.Ref
		}
		return refs, nil
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, updateAck, func(ctx workflow.Context, n int) error {
		n = min(max(n, 0), len(w.pending))
		for _, p := range w.pending[:n] {
			w.pendBytes -= p.Bytes
		}
		w.pending = slices.Delete(w.pending, 0, n)
		if n > 0 {
			w.ev.emit(ctx, work.Event{Type: work.EventGuidanceDelivered, Count: n})
		}
		return nil
	}); err != nil {
		return err
	}
	release := workflow.GetSignalChannel(ctx, signalRelease)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for release.Receive(ctx, nil) {
			if !w.detached {
				w.detached = true
				w.ev.emit(ctx, work.Event{Type: work.EventDetached})
			}
			w.cancel(ctx)
		}
	})
	return nil
}

func (w *workRun) validateSend(r sendRequest) error {
	if !w.visible(r.Owner) {
		return workErr(work.ErrNotFound, "")
	}
	if w.in.Kind != work.KindAgent {
		return workErr(work.ErrNotAgent, "")
	}
	if c, ok := w.commands[r.Command]; ok && r.Command != "" {
		if c.Digest != r.Digest {
			return workErr(work.ErrConflict, "")
		}
		return nil
	}
	if w.state.Terminal() {
		return workErr(work.ErrTerminal, "")
	}
	if m := w.in.Mailbox; (m.Messages > 0 && len(w.pending) >= m.Messages) || (m.Bytes > 0 && w.pendBytes+r.Bytes > m.Bytes) {
		return workErr(work.ErrMailboxFull, "")
	}
	return nil
}

func (w *workRun) cancel(ctx workflow.Context) cancelReply {
	now := workflow.Now(ctx)
	switch w.state {
	case work.StateQueued:
		w.dropGuidance(ctx)
		w.state = work.StateCancelled
		w.finished = now
		w.ev.transition(ctx, work.StateQueued, work.StateCancelled, work.Event{Duration: since(ctx, w.in.Created)})
		w.cancelAct()
		w.notify(ctx)
		return cancelReply{Accepted: true, State: w.state, At: now}
	case work.StateRunning:
		w.state = work.StateCancelRequested
		w.ev.transition(ctx, work.StateRunning, work.StateCancelRequested, work.Event{})
		w.cancelAct()
		w.notify(ctx)
		return cancelReply{Accepted: true, State: w.state, At: now}
	case work.StateCancelRequested:
		return cancelReply{Accepted: true, State: w.state, At: now}
	}
	return cancelReply{Accepted: false, State: w.state, At: now}
}

// settle maps the last attempt's end to the Work's terminal state.
func (w *workRun) settle(out runOutcome, err error) workOutcome {
	if w.state == work.StateCancelled { // cancelled while queued
		return workOutcome{State: work.StateCancelled}
	}
	var canceled *temporal.CanceledError
	var timeout *temporal.TimeoutError
	switch {
	case err == nil && out.Class == "":
		return workOutcome{State: work.StateCompleted, Output: out.Output, Bytes: len(out.Output)}
	case err == nil && out.Class == classNotRun:
		return workOutcome{State: work.StateCancelled}
	case err == nil && out.Class == classCancelled && w.state == work.StateCancelRequested:
		return workOutcome{State: work.StateCancelled}
	case err == nil && out.Class == classCancelled:
		return workOutcome{State: work.StateFailed, Class: work.ClassError}
	case err == nil:
		return workOutcome{State: work.StateFailed, Class: out.Class, Bytes: out.Bytes}
	case errors.As(err, &canceled):
		if w.state == work.StateCancelRequested || w.state == work.StateQueued {
			return workOutcome{State: work.StateCancelled}
		}
		return workOutcome{State: work.StateFailed, Class: work.ClassError}
	case errors.As(err, &timeout):
		if timeout.TimeoutType() == enumspb.TIMEOUT_TYPE_START_TO_CLOSE {
			return workOutcome{State: work.StateFailed, Class: work.ClassDeadline}
		}
		// A heartbeat or schedule timeout: the process running the
		// attempt is gone.
		return workOutcome{State: work.StateFailed, Class: work.ClassWorkerLost}
	}
	return workOutcome{State: work.StateFailed, Class: work.ClassError}
}

func (w *workRun) finish(ctx workflow.Context, res workOutcome) {
	// Undelivered guidance is dropped at the end, before the terminal
	// event (as in-process).
	w.dropGuidance(ctx)
	if from := w.state; from != res.State {
		w.state = res.State
		w.finished = workflow.Now(ctx)
		ev := work.Event{Duration: since(ctx, w.started), ErrorClass: res.Class}
		if w.started.IsZero() {
			ev.Duration = since(ctx, w.in.Created)
		}
		if res.State == work.StateCompleted || res.Class == work.ClassResultTooLarge {
			ev.Bytes = res.Bytes
		}
		w.ev.transition(ctx, from, res.State, ev)
	}
	if w.finished.IsZero() {
		w.finished = workflow.Now(ctx)
	}
	w.hasResult = res.State == work.StateCompleted
	w.notify(ctx)
}

// dropGuidance drops the undelivered guidance of a Work that ends.
func (w *workRun) dropGuidance(ctx workflow.Context) {
	if n := len(w.pending); n > 0 {
		for _, p := range w.pending {
			w.dropped = append(w.dropped, p.Ref)
		}
		w.pending, w.pendBytes = nil, 0
		w.ev.emit(ctx, work.Event{Type: work.EventGuidanceDropped, Count: n})
	}
}

// notify tells the owner's registry the Work's state (and waits until the
// signal is recorded, so that the owner's list never lags a reply).
func (w *workRun) notify(ctx workflow.Context) {
	w.last = w.record(ctx)
	w.tellOwner(ctx, updateRecord, w.last)
}

// record is the Work's state for its owner's registry, at the next
// revision.
//
// A revision is above every revision of an earlier workflow task: the
// task's WorkflowTaskStarted event id, shifted, plus a count within the
// task. A task whose local activity signalled a record and that was then
// lost (its worker died, or the server refused its completion) runs again
// with a later event id, and may decide otherwise (an update it had is not
// delivered again, an activity's completion came meanwhile): its records
// must not look like the lost task's repeats.
func (w *workRun) record(ctx workflow.Context) ownerRecord {
	w.rev = max(w.rev+1, int64(workflow.GetInfo(ctx).GetCurrentHistoryLength())<<revTaskShift)
	return ownerRecord{ID: w.in.ID, State: w.state, Rev: w.rev, Attempt: max(w.attempt, 1),
		Started: w.started, Finished: w.finished, HasResult: w.hasResult, Budget: w.budget, Spent: w.spentIfTerminal(),
		Progress: w.progress, Detached: w.detached}
}

// revTaskShift leaves room for the records of one workflow task in a
// revision.
const revTaskShift = 16

// startedReply answers an attempt's started update: whether it may run,
// and what its worker tells the owner's registry (workflow Owner) first.
type startedReply struct {
	Run    bool
	Owner  string
	Record ownerRecord
}

// spentIfTerminal is what a terminal Work spent, for its owner's pool
// (nil: unknown, or not terminal).
func (w *workRun) spentIfTerminal() *work.Usage {
	if !w.state.Terminal() {
		return nil
	}
	if w.spent == nil && w.attempt == 0 {
		return &work.Usage{} // cancelled while queued: it never ran
	}
	return w.spent
}

// tellOwner sends update name to the owner's registry and returns once
// the registry has applied it. It is sent from a local activity, within
// the workflow task that decides it: a signal from the workflow itself
// would take a workflow task more, and one this workflow sends as it
// closes would never be delivered. A send from a task that is then lost
// (its worker died) is harmless: the registry applies a transition only
// over an older revision, the task that runs again sends at later
// revisions, and a detach is idempotent.
func (w *workRun) tellOwner(ctx workflow.Context, name string, arg any) {
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		ScheduleToCloseTimeout: 24 * time.Hour,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumInterval: 10 * time.Second},
	})
	// It is retried until the registry has it: the registry counts the
	// Work against its owner's limits until it learns that it ended. A
	// registry that is gone (released) ends it at once.
	_ = workflow.ExecuteLocalActivity(lctx, tellOwnerName, w.in.OwnerWorkflow, name, arg).Get(ctx, nil)
}

// OwnerWorkflow is one owner's registry: its visible Work, the limits on
// starts and outstanding Work (across every coordinator process), and
// release. It continues as new when its history grows.
func OwnerWorkflow(ctx workflow.Context, st ownerState) error {
	o := &ownerRun{st: st}
	if err := workflow.SetQueryHandler(ctx, queryRecords, func() ([]ownerRecord, error) {
		out := make([]ownerRecord, 0, len(o.st.Records))
		for _, r := range o.st.Records {
			if !r.Detached {
				out = append(out, r)
			}
		}
		return out, nil
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, updateAdmit, func(ctx workflow.Context, r admitRequest) (admitReply, error) {
		// The validator decided; deciding again costs nothing and keeps the
		// handler right whatever ran between them.
		l, replay, err := o.admission(r)
		switch {
		case err != nil:
			return admitReply{}, err
		case replay:
			return admitReply{Replay: true, ID: l.ID, TargetID: l.TargetID}, nil
		}
		run, held, _ := o.st.Pool.reserve(r.Want, r.Eff, r.Function)
		if o.st.Pool != nil {
			for i := range held {
				o.st.Pool.Held[i] += held[i]
			}
		}
		o.st.Starts++
		o.st.Seq++
		r.Record.Seq = o.st.Seq
		r.Record.State = work.StateQueued
		r.Record.Held = held
		o.st.Retain = r.Retain
		o.st.Records = append(o.st.Records, r.Record)
		if r.Launch != "" {
			if len(o.st.Launches) >= work.MaxLaunchRecords {
				o.st.Launches = slices.Delete(o.st.Launches, 0, len(o.st.Launches)-work.MaxLaunchRecords+1)
			}
			o.st.Launches = append(o.st.Launches, launchRecord{Key: r.Launch, Target: r.Record.Label, Digest: r.Digest,
				ID: r.Record.ID, TargetID: r.Record.TargetID})
		}
		o.dirty = true
		return admitReply{Seq: r.Record.Seq, Budget: run}, nil
	}, workflow.UpdateHandlerOptions{Validator: o.validateAdmit}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, updatePool, func(ctx workflow.Context, limit [numDims]int64) error {
		if o.st.Pool == nil {
			o.st.Pool = &pool{}
		}
		for i, v := range limit {
			o.st.Pool.Limit[i] = max(v, 0)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, updateRelease, func(ctx workflow.Context) error {
		var futs []workflow.Future
		for _, r := range o.st.Records {
			if !r.State.Terminal() {
				futs = append(futs, workflow.SignalExternalWorkflow(ctx, r.ID, "", signalRelease, nil))
			}
		}
		for _, f := range futs {
			_ = f.Get(ctx, nil)
		}
		o.st = ownerState{Owner: o.st.Owner, Retain: o.st.Retain}
		o.trim = true
		return nil
	}); err != nil {
		return err
	}
	for _, u := range []struct {
		name  string
		apply func(string)
	}{{updateRead, o.read}, {updateDetached, o.detach}, {updateForget, o.forget}} {
		if err := workflow.SetUpdateHandler(ctx, u.name, func(ctx workflow.Context, id string) error {
			u.apply(id)
			o.dirty = true
			return nil
		}); err != nil {
			return err
		}
	}
	if err := workflow.SetUpdateHandler(ctx, updateRecord, func(ctx workflow.Context, r ownerRecord) error {
		o.transition(r)
		o.dirty = true
		return nil
	}); err != nil {
		return err
	}
	long := func() bool {
		info := workflow.GetInfo(ctx)
		return info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() > maxOwnerHistory
	}
	// The loop wakes after each update that changed the state, to check
	// the history's length, and on a release.
	for {
		_ = workflow.Await(ctx, func() bool { return o.trim || o.dirty })
		o.dirty = false
		if o.trim || long() {
			_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
			return workflow.NewContinueAsNewError(ctx, OwnerWorkflowName, o.st)
		}
	}
}

// maxOwnerHistory is the history length at which an owner's registry
// continues as new (tests lower it).
var maxOwnerHistory = 4000

type ownerRun struct {
	st    ownerState
	trim  bool
	dirty bool // an update changed the state: the run checks its length
}

func (o *ownerRun) read(id string) {
	if i := o.find(id); i >= 0 {
		o.st.Records[i].Read = true
	}
}

func (o *ownerRun) detach(id string) {
	if i := o.find(id); i >= 0 {
		o.st.Records[i].Detached = true
		if o.st.Records[i].State.Terminal() {
			o.remove(i)
		}
	}
}

func (o *ownerRun) forget(id string) {
	// A start that failed after admission: its launch identity is free.
	o.st.Launches = slices.DeleteFunc(o.st.Launches, func(l launchRecord) bool { return l.ID == id })
	if i := o.find(id); i >= 0 {
		if !o.st.Records[i].State.Terminal() {
			o.st.Pool.settle(o.st.Records[i].Held, &work.Usage{}) // it never ran
		}
		o.remove(i)
	}
}

func poolErr(short string) error {
	return workErr(work.ErrBudgetExhausted, "the "+short+" budget of this owner cannot cover the child's", short)
}

// launch finds the launch identity of r, if the owner used it.
func (o *ownerRun) launch(r admitRequest) (launchRecord, bool) {
	if r.Launch == "" {
		return launchRecord{}, false
	}
	i := slices.IndexFunc(o.st.Launches, func(l launchRecord) bool { return l.Key == r.Launch })
	if i < 0 {
		return launchRecord{}, false
	}
	return o.st.Launches[i], true
}

func errLaunchConflict() error {
	return workErr(work.ErrConflict, "the tool-call id was already used to launch other work (another target or input)")
}

func (o *ownerRun) validateAdmit(r admitRequest) error {
	_, _, err := o.admission(r)
	return err
}

// admission decides a start: a repeated launch (replay, with the launch
// it repeats; no limit applies), a refusal (err), or admitted.
func (o *ownerRun) admission(r admitRequest) (l launchRecord, replay bool, err error) {
	if l, ok := o.launch(r); ok {
		if l.Target != r.Record.Label || l.Digest != r.Digest {
			return launchRecord{}, false, errLaunchConflict()
		}
		return l, true, nil
	}
	active := 0
	for _, rec := range o.st.Records {
		if !rec.State.Terminal() {
			active++
		}
	}
	if r.MaxOutstanding > 0 && active >= r.MaxOutstanding {
		return launchRecord{}, false, workErr(work.ErrLimit, "outstanding limit "+strconv.Itoa(r.MaxOutstanding)+" reached for this owner", work.LimitOutstanding)
	}
	if r.MaxStarts > 0 && o.st.Starts >= r.MaxStarts {
		return launchRecord{}, false, workErr(work.ErrLimit, "starts limit "+strconv.Itoa(r.MaxStarts)+" reached for this owner", work.LimitStarts)
	}
	if _, _, short := o.st.Pool.reserve(r.Want, r.Eff, r.Function); short != "" {
		return launchRecord{}, false, poolErr(short)
	}
	return launchRecord{}, false, nil
}

func (o *ownerRun) find(id string) int {
	return slices.IndexFunc(o.st.Records, func(r ownerRecord) bool { return r.ID == id })
}

func (o *ownerRun) remove(i int) { o.st.Records = slices.Delete(o.st.Records, i, i+1) }

func (o *ownerRun) transition(r ownerRecord) {
	i := o.find(r.ID)
	if i < 0 {
		return
	}
	rec := &o.st.Records[i]
	if r.Rev <= rec.Rev {
		return // a late or repeated signal never moves a record back
	}
	// A terminal record is final, but for a later revision: the workflow
	// task that decided it can be lost after it was signalled (its worker
	// died, or the server refused its completion, failing its cancel) and
	// the Work go on to its real end. The owner's pool was settled at the
	// first terminal record, and is not again.
	settled := rec.State.Terminal()
	rec.take(r)
	if settled || !rec.State.Terminal() {
		return
	}
	o.st.Pool.settle(rec.Held, r.Spent)
	rec.Held = [numDims]int64{}
	if rec.Detached {
		o.remove(i)
		return
	}
	// Retention: the oldest finished visible Work beyond Retain goes.
	var term []int
	for j, x := range o.st.Records {
		if x.State.Terminal() && !x.Detached {
			term = append(term, j)
		}
	}
	if o.st.Retain > 0 && len(term) > o.st.Retain {
		oldest := term[0]
		for _, j := range term[1:] {
			if o.st.Records[j].Finished.Before(o.st.Records[oldest].Finished) {
				oldest = j
			}
		}
		o.remove(oldest)
	}
}
