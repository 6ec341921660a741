package temporal

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// listPageSize is the visibility page the deployment view reads its live
// Work with (one call per page).
const listPageSize = 1000

// maxListPages bounds the pages one refresh reads (100,000 live Works):
// beyond it the Snapshot fails with ErrDeploymentTooLarge rather than
// fanning out further.
const maxListPages = 100

// ErrDeploymentTooLarge is the error of an Engine's Snapshot when the
// deployment has more live Work than one refresh reads (100,000).
var ErrDeploymentTooLarge = fmt.Errorf("temporal: more live work than a snapshot reads (%d)", listPageSize*maxListPages)

// census is what the deployment view's refreshes keep between them;
// refreshes run one at a time (driver.Cache), so it needs no lock.
type census struct {
	// approvals is the approvals index's last answer, for a refresh whose
	// query fails (see awaitingApproval).
	approvals []approvalEntry
}

var _ observe.Watched = (*engine)(nil)

// The keys of a Work workflow's memo, set when it starts (free: part of
// the start, no upsert) and carried across continue-as-new: its target
// label, when it was created, and whether it is an external job or needs
// approval (absent for Work that is neither, and in the memos of older
// versions, which set the target only).
const (
	memoTarget   = "target"
	memoCreated  = "created"
	memoJob      = "job"
	memoApproval = "approval"
)

// startMemo is the memo a Work workflow starts with.
func startMemo(spec work.Spec, created time.Time) map[string]any {
	m := map[string]any{memoTarget: spec.Target.Label, memoCreated: created}
	if spec.Job != nil {
		m[memoJob] = true
	}
	if spec.NeedsApproval {
		m[memoApproval] = true
	}
	return m
}

// openWork is one open Work workflow as visibility lists it, with its
// memo.
type openWork struct {
	id, owner, target string
	created           time.Time
	job, approval     bool
}

// readDeployment reads the deployment view from Temporal (see Snapshot).
func (e *engine) readDeployment(ctx context.Context) (observe.Snapshot, error) {
	now := time.Now()
	open, err := e.listOpenWork(ctx)
	if err != nil {
		return observe.Snapshot{}, err
	}
	awaiting, err := e.awaitingApproval(ctx, open)
	if err != nil {
		return observe.Snapshot{}, err
	}
	byTarget := map[string][]openWork{}
	for _, t := range e.cfg.Limits.DeploymentTargets {
		byTarget[t] = nil
	}
	for _, w := range open {
		byTarget[w.target] = append(byTarget[w.target], w)
	}
	var counts []observe.TargetCounts
	var live []observe.LiveWork
	omitted := 0
	for _, label := range slices.Sorted(maps.Keys(byTarget)) {
		ws := byTarget[label]
		q, err := e.describeQueue(ctx, label)
		if err != nil {
			return observe.Snapshot{}, err
		}
		tc := observe.TargetCounts{Target: label, Pollers: q.pollers}
		jobs := 0
		for _, w := range ws {
			if r, ok := awaiting[w.id]; ok {
				tc.AwaitingApproval++
				if tc.OldestApproval.IsZero() || r.Before(tc.OldestApproval) {
					tc.OldestApproval = r
				}
			} else if w.job {
				jobs++
			}
		}
		// Work awaiting approval is queued but in no task queue: the
		// backlog is of the rest.
		queued := min(q.backlog, len(ws)-tc.AwaitingApproval)
		tc.Counts[work.StateQueued.Index()] = queued + tc.AwaitingApproval
		tc.Counts[work.StateRunning.Index()] = len(ws) - queued - tc.AwaitingApproval
		if queued > 0 {
			tc.OldestQueued = q.age
		}
		sort.Slice(ws, func(i, j int) bool { return ws[i].created.After(ws[j].created) })
		n := min(len(ws), e.cfg.Limits.StatusRows)
		var seen rowCounts
		for _, w := range ws[:n] {
			_, held := awaiting[w.id]
			lw, err := e.describeWork(ctx, w, held)
			if err != nil {
				// It ended since the list, or cannot be read now: counted, not shown.
				omitted++
				continue
			}
			seen.add(w, lw)
			live = append(live, lw)
		}
		tc.Waiting = seen.waitingJobs(jobs, queued, tc.Counts[work.StateRunning.Index()])
		omitted += len(ws) - n
		counts = append(counts, tc)
	}
	return driver.DeploymentSnapshot(now, counts, live, omitted), nil
}

// rowCounts is what the described rows of one target showed: its queued
// Work in the task queue, and its jobs (not awaiting approval), those
// waiting among them.
type rowCounts struct {
	queued, jobs, waiting int
}

func (c *rowCounts) add(w openWork, lw observe.LiveWork) {
	if lw.State == work.StateQueued && !lw.AwaitingApproval {
		c.queued++
	}
	if w.job && !lw.AwaitingApproval {
		c.jobs++
		if lw.Waiting {
			c.waiting++
		}
	}
}

// waitingJobs is how many of a target's jobs (not awaiting approval)
// wait for their result: those its described rows showed waiting, and of
// the rest those the backlog (queued, beyond the rows' queued Work) does
// not account for; at most running, the target's running Work. Exact when
// every job not yet waiting is among the rows (they are the newest: a job
// waits from its submit on); else a submit in progress beyond the rows
// counts as waiting.
func (c rowCounts) waitingJobs(jobs, queued, running int) int {
	rest := jobs - c.jobs - max(queued-c.queued, 0)
	return min(c.waiting+max(rest, 0), running)
}

// awaitingApproval returns when each open Work that awaits approval
// asked for it, by id, from the approvals index of the Engine's task
// queue: one query, made only when a listed Work needed approval when it
// started (its memo says so). A Work the index lists that visibility did
// not (yet) list is left out. A query needs a worker of the task queue to
// answer: when it fails (none runs, or none answers within the RPC
// timeout) the index's last answer stands in, so that the rest of the
// view (the pollers above all) is still reported. Called with the
// census's lock held.
func (e *engine) awaitingApproval(ctx context.Context, open []openWork) (map[string]time.Time, error) {
	idx := map[string]int{}
	for i, w := range open {
		if w.approval {
			idx[w.id] = i
		}
	}
	if len(idx) == 0 {
		return nil, nil
	}
	entries, err := e.approvalIndex(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		entries = e.census.approvals
	}
	e.census.approvals = entries
	out := map[string]time.Time{}
	for _, x := range entries {
		i, ok := idx[x.ID]
		if !ok {
			continue
		}
		if x.Label != "" && open[i].target == "" {
			open[i].target = x.Label
		}
		out[x.ID] = x.Requested
	}
	return out, nil
}

// listOpenWork lists the open Work workflows of the Engine's task queue.
func (e *engine) listOpenWork(ctx context.Context) ([]openWork, error) {
	query := fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running' AND TaskQueue = '%s'", WorkWorkflowName, e.cfg.taskQueue)
	var out []openWork
	var token []byte
	for page := 0; ; page++ {
		if page == maxListPages {
			return nil, ErrDeploymentTooLarge
		}
		rctx, cancel := e.rpc(ctx)
		resp, err := e.c.ListWorkflow(rctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: e.cfg.namespace, PageSize: listPageSize, NextPageToken: token, Query: query})
		cancel()
		if err != nil {
			return nil, fromTemporal(err)
		}
		for _, x := range resp.GetExecutions() {
			w, err := e.openWorkOf(x)
			if err != nil {
				return nil, err
			}
			out = append(out, w)
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			return out, nil
		}
	}
}

// openWorkOf reads one open Work workflow as visibility lists it: its
// memo decoded with the Engine's data converter (the client's, which
// encoded it), its owner search attribute with the default converter (the
// SDK encodes search attributes with it). A payload that does not decode
// is undecodable's error.
func (e *engine) openWorkOf(x *workflowpb.WorkflowExecutionInfo) (openWork, error) {
	w := openWork{id: x.GetExecution().GetWorkflowId(), created: x.GetStartTime().AsTime()}
	memo := x.GetMemo().GetFields()
	var created time.Time
	for key, into := range map[string]any{memoTarget: &w.target, memoCreated: &created, memoJob: &w.job, memoApproval: &w.approval} {
		if p := memo[key]; p != nil {
			if err := decodePayload(e.cfg.dc, p, into); err != nil {
				return openWork{}, err
			}
		}
	}
	// The start time of a continued run is not its Work's.
	if !created.IsZero() {
		w.created = created
	}
	if p := x.GetSearchAttributes().GetIndexedFields()[OwnerSearchAttribute]; p != nil {
		if err := decodePayload(converter.GetDefaultDataConverter(), p, &w.owner); err != nil {
			return openWork{}, err
		}
	}
	return w, nil
}

// queueStats is what DescribeTaskQueue says of a target's activity queue.
type queueStats struct {
	backlog, pollers int
	age              time.Duration
}

// describeQueue reads the statistics and pollers of label's activity
// queue.
func (e *engine) describeQueue(ctx context.Context, label string) (queueStats, error) {
	rctx, cancel := e.rpc(ctx)
	defer cancel()
	resp, err := e.c.WorkflowService().DescribeTaskQueue(rctx, &workflowservice.DescribeTaskQueueRequest{
		Namespace:     e.cfg.namespace,
		TaskQueue:     &taskqueuepb.TaskQueue{Name: activityQueue(e.cfg.taskQueue, label), Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
		TaskQueueType: enumspb.TASK_QUEUE_TYPE_ACTIVITY,
		ReportStats:   true,
	})
	if err != nil {
		return queueStats{}, fromTemporal(err)
	}
	q := queueStats{backlog: int(resp.GetStats().GetApproximateBacklogCount())}
	if a := resp.GetStats().GetApproximateBacklogAge(); a != nil {
		q.age = a.AsDuration()
	}
	seen := map[string]bool{}
	for _, p := range resp.GetPollers() {
		seen[p.GetIdentity()] = true
	}
	q.pollers = len(seen)
	return q, nil
}

// describeWork reads one live Work's attempt: its state, attempt count,
// start and progress. A Work awaiting approval (held) costs no call: it is queued, in no task queue. A queued
// Work's queue age counts from when its attempt was scheduled (Enqueued:
// after its approval, or its retry's backoff). An external job with no
// submit pending waits for its result (running, Waiting: between polls,
// polling on its poll queue, or cancel-requested while its job's cancel
// runs); its start is in its history, not in what the describe returns,
// so its row's Started is its creation.
func (e *engine) describeWork(ctx context.Context, w openWork, held bool) (observe.LiveWork, error) {
	lw := observe.LiveWork{ID: w.id, Target: w.target, Owner: w.owner, State: work.StateQueued, Attempt: 1, Created: w.created}
	if w.job {
		lw.Kind = work.KindFunction
	}
	if held {
		lw.AwaitingApproval = true
		return lw, nil
	}
	rctx, cancel := e.rpc(ctx)
	defer cancel()
	d, err := e.c.DescribeWorkflowExecution(rctx, w.id, "")
	if err != nil {
		return observe.LiveWork{}, fromTemporal(err)
	}
	pending := d.GetPendingActivities()
	a := attemptOf(pending)
	switch {
	case a != nil:
		lw.Attempt = max(int(a.GetAttempt()), 1)
		switch a.GetState() {
		case enumspb.PENDING_ACTIVITY_STATE_STARTED:
			lw.State = work.StateRunning
		case enumspb.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED:
			lw.State = work.StateCancelRequested
		}
		if lw.State != work.StateQueued {
			lw.Started = a.GetLastStartedTime().AsTime()
		} else if at := a.GetScheduledTime(); at != nil {
			lw.Enqueued = at.AsTime()
		}
		p, err := heartbeatProgress(e.cfg.dc, pending)
		if err != nil {
			return observe.LiveWork{}, err
		}
		lw.Progress = p
	case w.job:
		lw.State, lw.Waiting, lw.Started = work.StateRunning, true, w.created
		for _, p := range pending {
			if p.GetActivityType().GetName() == CancelJobActivityName {
				lw.State = work.StateCancelRequested
			}
		}
	}
	return lw, nil
}

// attemptOf is a Work's pending attempt (its Run activity, or a job's
// Submit: each holds a running slot), or nil.
func attemptOf(pending []*workflowpb.PendingActivityInfo) *workflowpb.PendingActivityInfo {
	for _, a := range pending {
		if n := a.GetActivityType().GetName(); n == RunActivityName || n == SubmitActivityName {
			return a
		}
	}
	return nil
}
