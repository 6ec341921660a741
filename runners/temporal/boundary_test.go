package temporal_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// TestEarlierHistoriesReplay: histories written by an earlier version of
// the runner (a plain Work, a Work cancelled while running, and their
// owner's registry, recorded at ae7c323) replay on this code.
func TestEarlierHistoriesReplay(t *testing.T) {
	// work-history-job-*.json: jobs recorded before jobDeadlineChange, a
	// first poll that answered done past the deadline and a Submit that
	// returned past it, each followed by a poll that completed the Work.
	for _, f := range []string{"work-history-v1-plain.json", "work-history-v1-cancelled.json", "owner-history-v1.json",
		"work-history-job-late-answer.json", "work-history-job-late-submit.json"} {
		t.Run(f, func(t *testing.T) {
			r, err := os.Open("testdata/" + f)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			h, err := client.HistoryFromJSON(r, client.HistoryJSONOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(f, "owner") {
				err = temporal.ReplayOwner(h)
			} else {
				err = temporal.ReplayWork(h, observe.NopObserver{})
			}
			if err != nil {
				t.Fatalf("replaying %s: %v", f, err)
			}
		})
	}
}

// drainCounter counts the drain updates a worker's client sends.
type drainCounter struct{ n atomic.Int64 }

func (d *drainCounter) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if r, ok := req.(*workflowservice.UpdateWorkflowExecutionRequest); ok && r.GetRequest().GetInput().GetName() == "drain" {
		d.n.Add(1)
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// TestBoundaryWithoutGuidance: a model-request boundary with no guidance
// sent since the last one costs no drain update (a billable action); one
// after a send takes it, in order, and guidance sent while the Work was
// queued is taken at its first boundary.
func TestBoundaryWithoutGuidance(t *testing.T) {
	var drains drainCounter
	wc := dialShared(t, drains.intercept)
	// The child takes a boundary each time it is told to, and hands over
	// what the boundary took.
	turn, took := make(chan struct{}), make(chan []string)
	boundaries := func(ctx context.Context, _ string) (string, error) {
		ex, _ := work.ExecutionFrom(ctx)
		for {
			select {
			case <-turn:
			case <-ctx.Done():
				return "", ctx.Err()
			}
			if _, err := boundary.BeginRequest(ex); err != nil {
				return "", err
			}
			select {
			case took <- boundary.Guidance(ex):
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
	}
	queues.Add(1)
	queue := "boundary-" + strconv.FormatInt(queues.Load(), 10)
	opts := []temporal.Option{temporal.WithTaskQueue(queue), temporal.WithRPCTimeout(time.Minute)}
	// Workflows first, the child's worker later: the Work stays queued.
	wf, err := temporal.NewWorker(server(t), nil, opts...)
	if err != nil || wf.Start() != nil {
		t.Fatal("worker", err)
	}
	defer wf.Stop()
	eng := temporal.New(server(t), opts...)
	defer eng.Close(context.Background())
	o := work.NewOwner(queue)
	ref, err := eng.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "agent", Kind: work.KindAgent},
		Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Send(t.Context(), o, ref.ID, "", "while queued"); err != nil {
		t.Fatal(err)
	}
	aw, err := temporal.NewWorker(wc, map[string]temporal.Child{"agent": {Kind: work.KindAgent, Run: boundaries}}, opts...)
	if err != nil || aw.Start() != nil {
		t.Fatal("worker", err)
	}
	defer aw.Stop()
	expect := func(want ...string) {
		t.Helper()
		turn <- struct{}{}
		if got := <-took; strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("the boundary took %q, want %q", got, want)
		}
	}
	expect("while queued")
	first := drains.n.Load()
	if first != 1 {
		t.Fatalf("%d drain updates at the first boundary, want 1", first)
	}
	for range 3 {
		expect()
	}
	if got := drains.n.Load(); got != first {
		t.Fatalf("%d drain updates at three boundaries with no guidance, want none", got-first)
	}
	for _, m := range []string{"one", "two"} {
		if _, err := eng.Send(t.Context(), o, ref.ID, "", m); err != nil {
			t.Fatal(err)
		}
	}
	expect("one", "two")
	expect()
	if got := drains.n.Load() - first; got != 1 {
		t.Fatalf("%d drain updates for one boundary after a send and one without, want 1", got)
	}
	if _, err := eng.Cancel(t.Context(), o, ref.ID); err != nil {
		t.Fatal(err)
	}
	for {
		st, _, err := eng.Result(t.Context(), o, ref.ID, work.MaxResultWait)
		if err != nil {
			t.Fatal(err)
		}
		if st.State.Terminal() {
			return
		}
	}
}
