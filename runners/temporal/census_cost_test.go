package temporal_test

import (
	"context"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
)

// TestDeploymentSnapshotCost measures what one refresh of the Engine's
// deployment view costs the Temporal service: calls by method and time,
// with N open Work workflows of one target on a queue no worker polls
// (started directly: they stay open, their first workflow task pending).
// Set AGENTWORK_SNAPSHOT_COST=N (1 means 2000); with
// AGENTWORK_TEMPORAL_HOSTPORT it measures that server (namespace
// "default", e.g. a dev server of its own) instead of the tests' one.
func TestDeploymentSnapshotCost(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("AGENTWORK_SNAPSHOT_COST"))
	if n <= 0 {
		t.Skip("set AGENTWORK_SNAPSHOT_COST=N to measure")
	}
	if n == 1 {
		n = 2000
	}
	var mu sync.Mutex
	calls := map[string]int{}
	var pageSizes []int // entries of each list page (-1: the call failed)
	var counting atomic.Bool
	ns := "default"
	hostPort := os.Getenv("AGENTWORK_TEMPORAL_HOSTPORT")
	if hostPort == "" {
		ns, hostPort = namespace(), sharedServer(t).HostPort
	}
	c, err := client.Dial(client.Options{HostPort: hostPort, Namespace: ns, ConnectionOptions: client.ConnectionOptions{
		DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any,
			cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			err := invoker(ctx, method, req, reply, cc, opts...)
			if counting.Load() {
				mu.Lock()
				calls[method]++
				if r, ok := reply.(*workflowservice.ListWorkflowExecutionsResponse); ok {
					pageSizes = append(pageSizes, len(r.GetExecutions()))
					if err != nil {
						pageSizes = append(pageSizes, -1)
						t.Logf("list page failed: %v", err)
					}
				}
				mu.Unlock()
			}
			return err
		})}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	eventQueues++
	queue := "snapcost-" + strconv.Itoa(eventQueues)
	start := time.Now()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			_, err := c.ExecuteWorkflow(t.Context(), client.StartWorkflowOptions{ID: "snapcost-" + queue + "-" + strconv.Itoa(i),
				TaskQueue: queue, Memo: map[string]any{"target": "t" + strconv.Itoa(i%5)}}, temporal.WorkWorkflowName)
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	t.Logf("started %d open Work workflows in %v", n, time.Since(start).Round(time.Millisecond))
	for _, rows := range []int{0, 10} {
		eng := temporal.New(c, temporal.WithTaskQueue(queue), temporal.WithNamespace(ns), temporal.WithOptions(work.WithStatusRows(rows)))
		// Visibility trails the starts: wait until it lists them all.
		deadline := time.Now().Add(2 * time.Minute)
		for {
			snap, err := eng.Snapshot(t.Context())
			live := 0
			for _, tc := range snap.Counts {
				live += tc.Counts[0] + tc.Counts[1]
			}
			if err == nil && live == n {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("snapshot lists %d of %d: %v", live, n, err)
			}
			_ = eng.Close(context.Background())
			eng = temporal.New(c, temporal.WithTaskQueue(queue), temporal.WithNamespace(ns), temporal.WithOptions(work.WithStatusRows(rows)))
			time.Sleep(time.Second) // visibility is eventually consistent
		}
		_ = eng.Close(context.Background())
		eng = temporal.New(c, temporal.WithTaskQueue(queue), temporal.WithNamespace(ns), temporal.WithOptions(work.WithStatusRows(rows)))
		mu.Lock()
		clear(calls)
		pageSizes = nil
		mu.Unlock()
		counting.Store(true)
		took := time.Now()
		snap, err := eng.Snapshot(t.Context())
		elapsed := time.Since(took)
		_, _ = eng.Snapshot(t.Context()) // cached: no call
		counting.Store(false)
		_ = eng.Close(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		total := 0
		for _, v := range calls {
			total += v
		}
		t.Logf("rows %d: %d live Works, %d targets, %d rows: one refresh %d calls %v (list pages %v) in %v", rows, n, len(snap.Counts), len(snap.Live), total, calls, pageSizes, elapsed.Round(time.Millisecond))
		// A full last page may come with a token for an empty one.
		pages := calls["/temporal.api.workflowservice.v1.WorkflowService/ListWorkflowExecutions"]
		wantPages := (n + 999) / 1000
		if (pages != wantPages && pages != n/1000+1) ||
			calls["/temporal.api.workflowservice.v1.WorkflowService/DescribeTaskQueue"] != 5 ||
			calls["/temporal.api.workflowservice.v1.WorkflowService/DescribeWorkflowExecution"] != min(rows, n/5)*5 {
			t.Errorf("calls %v: want %d list pages, 5 queue descriptions, %d executions", calls, wantPages, min(rows, n/5)*5)
		}
		mu.Unlock()
		if snap.LiveOmitted+len(snap.Live) != n {
			t.Errorf("rows %d + omitted %d != %d", len(snap.Live), snap.LiveOmitted, n)
		}
	}
}
