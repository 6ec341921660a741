package temporal

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/agentwork/agentwork/work"
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

// census caches the Engine's deployment view: refreshed at most once per
// interval (WithSnapshotInterval), one refresh at a time.
type census struct {
	mu      sync.Mutex // held during a refresh: concurrent scrapes wait for it
	at      time.Time  // when snap was read; zero: never
	snap    work.Snapshot
	err     error
	unwatch func()
}

var _ work.Watched = (*Engine)(nil)

// Snapshot returns the deployment's live Work as Temporal keeps it
// (work.Watched, a Deployment snapshot), read at most once per
// WithSnapshotInterval (default 15 s) and reused in between, so that a
// scrape never fans out: concurrent callers share one refresh. A refresh
// costs, with L open Work workflows of this task queue, T targets and R
// status rows per target (WithStatusRows):
//
//   - ceil(L/1000) ListWorkflowExecutions calls (visibility: the open
//     agentwork.Work workflows of the task queue, with the target from
//     their memo and the owner from AgentworkOwner);
//   - T DescribeTaskQueue calls with statistics on the targets' activity
//     queues: the backlog count (queued Work) and age (the oldest queued
//     age, Temporal's own figure) and the pollers (workers that poll it);
//   - up to R×T DescribeWorkflowExecution calls: the newest R live Works
//     of each target, their attempt's state (scheduled: queued; started:
//     running; cancel requested: cancel-requested), attempt count and
//     progress. The rest are counted in LiveOmitted.
//
// Its counts are live Work only: queued is the backlog (at most the
// target's open Works), running the rest of them (cancel-requested Work
// included: telling it apart would take a call per Work; each Worker's
// Snapshot reports its own cancel-requested attempts and their age).
// Terminal Work is not counted (closed workflows are Temporal's history,
// not live state). It reads no search attribute that a Work would have to
// upsert (each upsert is a billable action): the owner's is set when the
// workflow starts, and the target comes from the memo.
//
// A refresh's calls are bounded by ctx and each by the RPC timeout; a
// failed refresh returns its error (the gauges then report nothing that
// round) and is retried at the next call. After Close it returns
// work.ErrClosed; an Engine not made by New returns work.ErrNotInitialized.
func (e *Engine) Snapshot(ctx context.Context) (work.Snapshot, error) {
	if e == nil || e.c == nil {
		return work.Snapshot{}, work.ErrNotInitialized
	}
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return work.Snapshot{}, work.ErrClosed
	}
	e.census.mu.Lock()
	defer e.census.mu.Unlock()
	if !e.census.at.IsZero() && e.census.err == nil && time.Since(e.census.at) < e.cfg.ops.interval {
		return e.census.snap, nil
	}
	snap, err := e.readDeployment(ctx)
	e.census.snap, e.census.err = snap, err
	e.census.at = time.Now()
	return snap, err
}

// openWork is one open Work workflow as visibility lists it.
type openWork struct {
	id, owner, target string
	created           time.Time
}

// readDeployment reads the deployment view from Temporal (see Snapshot).
func (e *Engine) readDeployment(ctx context.Context) (work.Snapshot, error) {
	open, err := e.listOpenWork(ctx)
	if err != nil {
		return work.Snapshot{}, err
	}
	byTarget := map[string][]openWork{}
	for _, t := range e.cfg.ops.targets {
		byTarget[t] = nil
	}
	for _, w := range open {
		byTarget[w.target] = append(byTarget[w.target], w)
	}
	labels := make([]string, 0, len(byTarget))
	for t := range byTarget {
		labels = append(labels, t)
	}
	sort.Strings(labels)
	snap := work.Snapshot{Time: time.Now(), Deployment: true}
	for _, label := range labels {
		ws := byTarget[label]
		q, err := e.describeQueue(ctx, label)
		if err != nil {
			return work.Snapshot{}, err
		}
		tc := work.TargetCounts{Target: label, Pollers: q.pollers}
		queued := min(q.backlog, len(ws))
		tc.Counts[stateIndex(work.StateQueued)] = queued
		tc.Counts[stateIndex(work.StateRunning)] = len(ws) - queued
		if queued > 0 {
			tc.OldestQueued = q.age
		}
		snap.Queued += queued
		snap.Counts = append(snap.Counts, tc)
		sort.Slice(ws, func(i, j int) bool { return ws[i].created.After(ws[j].created) })
		n := min(len(ws), e.cfg.ops.rows)
		for _, w := range ws[:n] {
			lw, err := e.describeWork(ctx, w)
			if err != nil {
				// It ended since the list, or cannot be read now: counted, not shown.
				snap.LiveOmitted++
				continue
			}
			snap.Live = append(snap.Live, lw)
		}
		snap.LiveOmitted += len(ws) - n
	}
	work.SortLive(snap.Live)
	return snap, nil
}

// stateIndex is st's index in work.States.
func stateIndex(st work.State) int {
	for i, s := range work.States {
		if s == st {
			return i
		}
	}
	return 0
}

// listOpenWork lists the open Work workflows of the Engine's task queue.
func (e *Engine) listOpenWork(ctx context.Context) ([]openWork, error) {
	query := fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running' AND TaskQueue = '%s'", WorkWorkflowName, e.cfg.taskQueue)
	var out []openWork
	var token []byte
	dc := converter.GetDefaultDataConverter()
	for page := 0; ; page++ {
		if page == maxListPages {
			return nil, ErrDeploymentTooLarge
		}
		rctx, cancel := e.rpc(ctx)
		resp, err := e.c.ListWorkflow(rctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: e.cfg.ops.namespace, PageSize: listPageSize, NextPageToken: token, Query: query})
		cancel()
		if err != nil {
			return nil, fromTemporal(err)
		}
		for _, x := range resp.GetExecutions() {
			w := openWork{id: x.GetExecution().GetWorkflowId(), created: x.GetStartTime().AsTime()}
			if p := x.GetMemo().GetFields()["target"]; p != nil {
				_ = dc.FromPayload(p, &w.target)
			}
			if p := x.GetSearchAttributes().GetIndexedFields()[OwnerSearchAttribute]; p != nil {
				_ = dc.FromPayload(p, &w.owner)
			}
			out = append(out, w)
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			return out, nil
		}
	}
}

// queueStats is what DescribeTaskQueue says of a target's activity queue.
type queueStats struct {
	backlog, pollers int
	age              time.Duration
}

// describeQueue reads the statistics and pollers of label's activity
// queue.
func (e *Engine) describeQueue(ctx context.Context, label string) (queueStats, error) {
	rctx, cancel := e.rpc(ctx)
	defer cancel()
	resp, err := e.c.WorkflowService().DescribeTaskQueue(rctx, &workflowservice.DescribeTaskQueueRequest{
		Namespace:     e.cfg.ops.namespace,
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
// start and progress.
func (e *Engine) describeWork(ctx context.Context, w openWork) (work.LiveWork, error) {
	rctx, cancel := e.rpc(ctx)
	defer cancel()
	d, err := e.c.DescribeWorkflowExecution(rctx, w.id, "")
	if err != nil {
		return work.LiveWork{}, fromTemporal(err)
	}
	lw := work.LiveWork{ID: w.id, Target: w.target, Owner: w.owner, State: work.StateQueued, Attempt: 1, Created: w.created}
	pending := d.GetPendingActivities()
	if a := attemptOf(pending); a != nil {
		lw.Attempt = max(int(a.GetAttempt()), 1)
		switch a.GetState() {
		case enumspb.PENDING_ACTIVITY_STATE_STARTED:
			lw.State = work.StateRunning
		case enumspb.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED:
			lw.State = work.StateCancelRequested
		}
		if lw.State != work.StateQueued {
			lw.Started = a.GetLastStartedTime().AsTime()
		}
		lw.Progress = heartbeatProgress(pending)
	}
	return lw, nil
}

// attemptOf is a Work's pending attempt (its Run activity), or nil.
func attemptOf(pending []*workflowpb.PendingActivityInfo) *workflowpb.PendingActivityInfo {
	for _, a := range pending {
		if a.GetActivityType().GetName() == RunActivityName {
			return a
		}
	}
	return nil
}
