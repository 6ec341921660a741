package temporal_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
)

// eventTypes counts the event types of h.
func eventTypes(h *historypb.History) map[enumspb.EventType]int {
	n := map[enumspb.EventType]int{}
	for _, e := range h.GetEvents() {
		n[e.GetEventType()]++
	}
	return n
}

// TestNotesReachTheRegistry: a Work's workflow tells its owner's registry
// its transitions as signals (one billable action each, no local
// activity), and the Work's and the registry's histories replay on this
// code; a Work started as an earlier coordinator starts it (no notes)
// still tells it by a local activity's update, and replays too.
func TestNotesReachTheRegistry(t *testing.T) {
	for _, notes := range []bool{true, false} {
		t.Run("notes="+strconv.FormatBool(notes), func(t *testing.T) {
			defer temporal.SetNotes(notes)()
			c := server(t)
			started := make(chan struct{})
			eng, queue := deploy(t, "notes", map[string]temporal.Child{
				"echo": {Kind: work.KindFunction, Run: func(_ context.Context, in string) (string, error) { return in, nil }},
				"hold": {Kind: work.KindAgent, Run: func(ctx context.Context, _ string) (string, error) {
					close(started)
					<-ctx.Done()
					return "", ctx.Err()
				}},
			}, nil, nil)
			o := work.NewOwner(queue)
			plain := startFn(t, eng, o, "echo", work.KindFunction)
			if st, out, err := eng.Result(t.Context(), o, plain, work.MaxResultWait); err != nil || st.State != work.StateCompleted || out != "x" {
				t.Fatalf("Result = %s %q %v", st.State, out, err)
			}
			held := startFn(t, eng, o, "hold", work.KindAgent)
			<-started
			if r, err := eng.Cancel(t.Context(), o, held); err != nil || r.State != work.StateCancelRequested {
				t.Fatalf("Cancel = %+v, %v", r, err)
			}
			// The cancel's reply came after its record reached the registry.
			if st, err := eng.Status(t.Context(), o, held); err != nil || st.State != work.StateCancelRequested && st.State != work.StateCancelled {
				t.Fatalf("Status after the cancel = %s, %v", st.State, err)
			}
			if err := c.GetWorkflow(t.Context(), held, "").Get(t.Context(), nil); err != nil {
				t.Fatal(err)
			}
			if st, err := eng.Status(t.Context(), o, held); err != nil || st.State != work.StateCancelled {
				t.Fatalf("Status after the Work closed = %s, %v", st.State, err)
			}
			for _, id := range []string{plain, held} {
				h := workHistory(t, c, id)
				n := eventTypes(h)
				signals, markers := n[enumspb.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED], n[enumspb.EVENT_TYPE_MARKER_RECORDED]
				if notes && (signals == 0 || markers != 0) || !notes && (signals != 0 || markers == 0) {
					t.Fatalf("Work %s (notes %v): %d signals, %d local-activity markers", id, notes, signals, markers)
				}
				if err := temporal.ReplayWork(h, work.NopObserver{}); err != nil {
					t.Fatalf("replaying Work %s: %v", id, err)
				}
			}
			owner := workHistory(t, c, "agentwork-owner/"+o.ID())
			if got := eventTypes(owner)[enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED]; notes != (got > 0) {
				t.Fatalf("the registry has %d signals (notes %v)", got, notes)
			}
			if err := temporal.ReplayOwner(owner); err != nil {
				t.Fatalf("replaying the registry: %v", err)
			}
		})
	}
}

// startFn starts a Work of target label (kind k) with input "x" for o.
func startFn(t *testing.T, eng *temporal.Engine, o work.Owner, label string, k work.Kind) string {
	t.Helper()
	ref, err := eng.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: label, Kind: k}, Input: "x",
		Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	return ref.ID
}

// TestEarlierHistoriesReplay: histories written by the runner before its
// Works sent notes (a plain Work, a Work cancelled while running, and
// their owner's registry, recorded at ae7c323) replay on this code.
func TestEarlierHistoriesReplay(t *testing.T) {
	for _, f := range []string{"work-history-la-plain.json", "work-history-la-cancelled.json", "owner-history-v1.json"} {
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
				err = temporal.ReplayWork(h, work.NopObserver{})
			}
			if err != nil {
				t.Fatalf("replaying %s: %v", f, err)
			}
		})
	}
}

// TestNoteFreesItsPlace: under an outstanding limit of one, a Start right
// after the Result of the Work before it is admitted, each time: the
// admission arrives while the ended Work's note may still wait to be
// applied (its signal delivered, the registry's task for it not yet run),
// and the registry applies the notes it has before it decides.
func TestNoteFreesItsPlace(t *testing.T) {
	eng, queue := deploy(t, "note-frees", map[string]temporal.Child{
		"echo": {Kind: work.KindFunction, Run: func(_ context.Context, in string) (string, error) { return in, nil }},
	}, nil, []temporal.Option{temporal.WithMaxOutstanding(1), temporal.WithMaxStarts(0)})
	o := work.NewOwner(queue)
	for i := range 12 {
		ref, err := eng.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "echo", Kind: work.KindFunction},
			Input: strconv.Itoa(i), Run: func(context.Context) (string, error) { return "", nil }})
		if err != nil {
			t.Fatalf("Start %d after the Work before it ended: %v", i, err)
		}
		for {
			st, out, err := eng.Result(t.Context(), o, ref.ID, work.MaxResultWait)
			if err != nil {
				t.Fatal(err)
			}
			if st.State.Terminal() {
				if out != strconv.Itoa(i) {
					t.Fatalf("Result %d = %s %q", i, st.State, out)
				}
				break
			}
		}
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
	server(t)
	shared.mu.Lock()
	hostPort := shared.srv.GetFrontendHostPort()
	shared.mu.Unlock()
	var drains drainCounter
	wc, err := client.Dial(client.Options{HostPort: hostPort, Namespace: namespace(),
		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(drains.intercept)}}})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
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
			if _, err := ex.BeginRequest(); err != nil {
				return "", err
			}
			select {
			case took <- ex.Guidance():
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
