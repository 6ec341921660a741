package temporal_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// The billable actions counted, by Temporal Cloud's definition
// (https://docs.temporal.io/cloud/actions): what a history shows is
// counted from the histories, what no history shows (queries, recorded
// heartbeats) from the calls that reached the server.
const (
	actStart     = "workflow started" // a client start, a continue-as-new, a child start
	actActivity  = "activity attempt" // each attempt started (a retry is one more)
	actLocal     = "local activity"   // the local activities of one workflow task: one
	actTimer     = "timer"
	actSignal    = "signal"
	actUpdate    = "update" // accepted (in the history); rejected ones in actRejected
	actRejected  = "update rejected"
	actChild     = "child workflow"
	actUpsert    = "search attributes or memo upsert"
	actQuery     = "query"
	actHeartbeat = "heartbeat"
)

const wfService = "/temporal.api.workflowservice.v1.WorkflowService/"

// costCounter is a gRPC client interceptor that counts, while on, the
// calls by method, and keeps the history of every execution deleted
// through it (a guidance holder deletes itself) from just before the
// deletion.
type costCounter struct {
	mu      sync.Mutex
	on      bool
	calls   map[string]int
	errs    map[string]int // "method: code" of the calls that failed
	rejects int
	deleted map[string][]*historypb.HistoryEvent // workflow id -> its history at its deletion
}

func newCostCounter() *costCounter {
	return &costCounter{calls: map[string]int{}, errs: map[string]int{}, deleted: map[string][]*historypb.HistoryEvent{}}
}

func (k *costCounter) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if d, ok := req.(*workflowservice.DeleteWorkflowExecutionRequest); ok {
		if evs, err := readHistory(ctx, cc, d.GetNamespace(), d.GetWorkflowExecution()); err == nil {
			k.mu.Lock()
			k.deleted[d.GetWorkflowExecution().GetWorkflowId()] = evs
			k.mu.Unlock()
		}
	}
	err := invoker(ctx, method, req, reply, cc, opts...)
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.on {
		return err
	}
	k.calls[strings.TrimPrefix(method, wfService)]++
	if err != nil {
		k.errs[strings.TrimPrefix(method, wfService)+": "+status.Code(err).String()]++
	}
	// A rejected update never enters the history; Cloud counts it.
	if r, ok := reply.(*workflowservice.UpdateWorkflowExecutionResponse); ok && err == nil &&
		r.GetOutcome().GetFailure() != nil && r.GetStage() != enumspb.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED {
		k.rejects++
	}
	return err
}

// readHistory reads one execution's history through cc.
func readHistory(ctx context.Context, cc *grpc.ClientConn, ns string, ex *commonpb.WorkflowExecution) ([]*historypb.HistoryEvent, error) {
	var evs []*historypb.HistoryEvent
	var token []byte
	for {
		var resp workflowservice.GetWorkflowExecutionHistoryResponse
		err := cc.Invoke(ctx, wfService+"GetWorkflowExecutionHistory", &workflowservice.GetWorkflowExecutionHistoryRequest{
			Namespace: ns, Execution: ex, NextPageToken: token}, &resp)
		if err != nil {
			return nil, err
		}
		evs = append(evs, resp.GetHistory().GetEvents()...)
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return evs, nil
		}
	}
}

// begin clears the counts and starts counting.
func (k *costCounter) begin() {
	k.mu.Lock()
	defer k.mu.Unlock()
	clear(k.calls)
	clear(k.errs)
	clear(k.deleted)
	k.rejects, k.on = 0, true
}

// end stops counting and returns the calls by method, the rejected
// updates and the deleted executions' histories.
func (k *costCounter) end() (map[string]int, int, map[string][]*historypb.HistoryEvent) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.on = false
	return maps.Clone(k.calls), k.rejects, maps.Clone(k.deleted)
}

// failures returns the failed calls counted so far, by method and code.
func (k *costCounter) failures() map[string]int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return maps.Clone(k.errs)
}

// deletedCount is how many executions were deleted through k so far.
func (k *costCounter) deletedCount() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.deleted)
}

// cost is what a case cost: actions by kind, history events and bytes
// (the sum of the events' encoded sizes), by workflow kind too.
type cost struct {
	actions map[string]float64
	byWF    map[string]float64 // workflow kind -> actions from its histories
	events  float64
	bytes   float64
}

func newCost() *cost { return &cost{actions: map[string]float64{}, byWF: map[string]float64{}} }

func (c *cost) total() float64 {
	t := 0.0
	for _, v := range c.actions {
		t += v
	}
	return t
}

// add counts one workflow's history (every run of it), weighted by w (a
// shared registry's share).
func (c *cost) add(kind string, evs []*historypb.HistoryEvent, w float64) {
	las := map[int64]bool{} // workflow tasks with local-activity markers
	for _, e := range evs {
		c.events += w
		c.bytes += w * float64(proto.Size(e))
		n := 0.0
		kindOf := ""
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			kindOf, n = actStart, 1
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			kindOf, n = actActivity, float64(max(e.GetActivityTaskStartedEventAttributes().GetAttempt(), 1))
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			a := e.GetMarkerRecordedEventAttributes()
			if a.GetMarkerName() == "LocalActivity" && !las[a.GetWorkflowTaskCompletedEventId()] {
				las[a.GetWorkflowTaskCompletedEventId()] = true
				kindOf, n = actLocal, 1
			}
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			kindOf, n = actTimer, 1
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			kindOf, n = actSignal, 1
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
			kindOf, n = actUpdate, 1
		case enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			kindOf, n = actChild, 1
		case enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES, enumspb.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED:
			kindOf, n = actUpsert, 1
		}
		if n > 0 {
			c.actions[kindOf] += w * n
			c.byWF[kind] += w * n
		}
	}
}

// addCalls counts what no history shows, from the calls that reached the
// server.
func (c *cost) addCalls(calls map[string]int, rejects int, w float64) {
	c.actions[actQuery] += w * float64(calls["QueryWorkflow"])
	c.actions[actHeartbeat] += w * float64(calls["RecordActivityTaskHeartbeat"]+calls["RecordActivityTaskHeartbeatById"])
	c.actions[actRejected] += w * float64(rejects)
	c.byWF["(calls: queries, heartbeats)"] += w * float64(calls["QueryWorkflow"]+calls["RecordActivityTaskHeartbeat"]+
		calls["RecordActivityTaskHeartbeatById"]+rejects)
}

// workflowHistory reads every run of workflow id (following the chain of
// continue-as-new back from the newest run).
func workflowHistory(t testing.TB, c client.Client, id string) []*historypb.HistoryEvent {
	t.Helper()
	var all []*historypb.HistoryEvent
	run := ""
	for {
		it := c.GetWorkflowHistory(context.Background(), id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		var evs []*historypb.HistoryEvent
		for it.HasNext() {
			e, err := it.Next()
			var nf *serviceerror.NotFound
			if errors.As(err, &nf) {
				return all // never started (a foreground call's owner)
			}
			if err != nil {
				t.Fatalf("history of %s: %v", id, err)
			}
			evs = append(evs, e)
		}
		all = append(evs, all...)
		if len(evs) == 0 {
			return all
		}
		run = evs[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
		if run == "" {
			return all
		}
	}
}

// runs is how many runs a workflow's history holds.
func runs(evs []*historypb.HistoryEvent) int {
	n := 0
	for _, e := range evs {
		if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED {
			n++
		}
	}
	return n
}

// breakdown is a cost's actions by kind and by workflow, for the record.
func (c *cost) breakdown() string {
	var b strings.Builder
	write := func(m map[string]float64) {
		keys := make([]string, 0, len(m))
		for k := range m {
			if m[k] != 0 {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s %.4g", k, m[k])
		}
	}
	write(c.actions)
	b.WriteString(" | by workflow: ")
	write(c.byWF)
	return b.String()
}
