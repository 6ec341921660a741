package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// holdRuns are the hold child's runs by input: started is closed when it
// runs, release lets it return (it ignores its context until then).
var holdRuns sync.Map // input -> *holdRun

type holdRun struct{ started, release chan struct{} }

func newHoldRun(t *testing.T, in string) *holdRun {
	r := &holdRun{started: make(chan struct{}), release: make(chan struct{})}
	holdRuns.Store(in, r)
	t.Cleanup(func() {
		select {
		case <-r.release:
		default:
			close(r.release)
		}
		holdRuns.Delete(in)
	})
	return r
}

var holdChild = temporal.Child{Kind: work.KindFunction, Run: func(ctx context.Context, in string) (string, error) {
	v, _ := holdRuns.Load(in)
	r := v.(*holdRun)
	close(r.started)
	<-r.release
	return "held", nil
}}

// gauge returns the Int64/Float64 gauge name's points as "target=v", and
// with state when it has one.
func gauges(t *testing.T, o *observed, name string) map[string]float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := o.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	key := func(s attribute.Set) string {
		var parts []string
		for _, kv := range s.ToSlice() {
			parts = append(parts, string(kv.Key)+"="+kv.Value.String())
		}
		return strings.Join(parts, ",")
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch g := m.Data.(type) {
			case metricdata.Gauge[int64]:
				for _, dp := range g.DataPoints {
					out[key(dp.Attributes)] = float64(dp.Value)
				}
			case metricdata.Gauge[float64]:
				for _, dp := range g.DataPoints {
					out[key(dp.Attributes)] = dp.Value
				}
			}
		}
	}
	return out
}

// TestDeploymentView: a worker whose per-target limit is 1 runs one of
// three Works of its target (two queue in Temporal's task queue), and a
// Work of a target no worker polls waits. The coordinator's Engine
// (work.WithDeploymentGauges) reports the deployment's counts, queued ages and
// pollers, agreeing with Temporal's visibility count; the Worker's own
// Snapshot its slot and limit, then the cancel-requested attempt with the
// time its cancel arrived, all through the one telemetry Observer.
func TestDeploymentView(t *testing.T) {
	deploymentView(t, server(t))
}

// TestDeploymentViewCodec is TestDeploymentView under an encryption codec:
// the client is dialed with the test codec's converter (codec_test.go)
// and the Engine and Worker are given it (WithDataConverter), so that the
// memos the view reads are sealed.
func TestDeploymentViewCodec(t *testing.T) {
	c, dc := sharedCodec(t)
	deploymentView(t, c, temporal.WithDataConverter(dc))
}

// deploymentView is TestDeploymentView on c, the Engine and Worker given
// extra options.
func deploymentView(t *testing.T, c client.Client, extra ...temporal.Option) {
	eventQueues++
	queue := "deployview-" + strconv.Itoa(eventQueues)
	obs := newObserved(t, nil)
	base := append([]temporal.Option{temporal.WithTaskQueue(queue), temporal.WithRPCTimeout(time.Minute), temporal.WithOptions(work.WithObserver(obs.obs))}, extra...)
	w, err := temporal.NewWorker(c, map[string]temporal.Child{"hold": holdChild}, append(base, temporal.WithOptions(work.WithMaxRunning(1)))...)
	if err != nil || w.Start() != nil {
		t.Fatal("worker", err)
	}
	t.Cleanup(w.Stop)
	eng := temporal.New(c, append(base, temporal.WithOptions(work.WithDeploymentGauges("idle")), temporal.WithNamespace(namespace()),
		temporal.WithOptions(work.WithSnapshotInterval(time.Second)), temporal.WithOptions(work.WithStatusRows(2)))...)
	t.Cleanup(func() { _ = eng.Close(context.Background()) })

	o := work.NewOwner("deployview-" + strconv.FormatInt(time.Now().UnixNano(), 36))
	var refs []work.Ref
	var runs []*holdRun
	for i := range 3 {
		in := o.ID() + "-" + strconv.Itoa(i) + " " + censusCanary
		runs = append(runs, newHoldRun(t, in))
		ref, err := eng.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "hold", Kind: work.KindFunction}, Input: in,
			Run: func(ctx context.Context) (string, error) { return holdChild.Run(ctx, in) }})
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
		if i == 0 {
			<-runs[0].started // the first takes the worker's one slot
		}
	}
	if _, err := eng.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "lost", Kind: work.KindFunction},
		Run: func(context.Context) (string, error) { return "", nil }}); err != nil {
		t.Fatal(err)
	}

	// The task queue's statistics trail the queue: poll with a deadline.
	var snap observe.Snapshot
	deadline := time.Now().Add(time.Minute)
	for {
		snap, err = eng.Snapshot(t.Context())
		tc := targetCounts(snap)
		if err == nil && tc["hold"].Counts[0] == 2 && tc["hold"].Counts[1] == 1 && tc["lost"].Counts[0] == 1 &&
			tc["hold"].Pollers == 1 && tc["hold"].OldestQueued > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deployment snapshot %+v, %v", snap, err)
		}
		time.Sleep(200 * time.Millisecond) // Temporal's statistics: no event to wait on
	}
	tc := targetCounts(snap)
	if !snap.Deployment || snap.MaxRunning != 0 || snap.SlotsInUse != 0 || tc["lost"].Pollers != 0 || tc["idle"].Pollers != 0 ||
		tc["idle"].Counts != [len(observe.States)]int{} {
		t.Fatalf("deployment snapshot %+v", snap)
	}
	// Newest two rows of hold (one queued Work omitted) and lost's one.
	if len(snap.Live) != 3 || snap.LiveOmitted != 1 {
		t.Fatalf("rows %+v, omitted %d", snap.Live, snap.LiveOmitted)
	}
	for _, lw := range snap.Live {
		if lw.Owner != o.ID() || lw.ID == refs[0].ID || lw.State != work.StateQueued {
			t.Fatalf("row %+v: want the newest, queued, owned by %s", lw, o.ID())
		}
	}
	// Visibility agrees: open Work workflows of the queue = live counts.
	cnt, err := c.CountWorkflow(t.Context(), &workflowservice.CountWorkflowExecutionsRequest{Namespace: namespace(),
		Query: fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running' AND TaskQueue = '%s'", temporal.WorkWorkflowName, queue)})
	if err != nil || cnt.GetCount() != 4 {
		t.Fatalf("visibility count %v, %v; want 4", cnt.GetCount(), err)
	}

	ws, _ := w.Snapshot(t.Context())
	if len(ws.Counts) != 1 || ws.Counts[0].SlotsInUse != 1 || ws.Counts[0].MaxRunning != 1 || len(ws.Live) != 1 ||
		ws.Live[0].ID != refs[0].ID || ws.Live[0].State != work.StateRunning {
		t.Fatalf("worker snapshot %+v", ws)
	}
	if _, err := eng.Cancel(t.Context(), o, refs[0].ID); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(time.Minute)
	for ws, _ = w.Snapshot(t.Context()); len(ws.Live) != 1 || ws.Live[0].State != work.StateCancelRequested; ws, _ = w.Snapshot(t.Context()) {
		if time.Now().After(deadline) {
			t.Fatalf("worker snapshot after cancel %+v", ws)
		}
		time.Sleep(50 * time.Millisecond) // the cancel arrives with a heartbeat
	}
	if ws.Live[0].CancelAt.IsZero() || ws.Counts[0].SlotsInUse != 1 {
		t.Fatalf("cancel-requested attempt %+v", ws)
	}

	// Through the Observer: the worker's slot and limit by target, the
	// deployment's pollers and counts, the shared limit of the Engine's
	// foreground in-process engine.
	slots := gauges(t, obs, "agentwork.work.slots_in_use")
	limit := gauges(t, obs, "agentwork.work.concurrency_limit")
	pollers := gauges(t, obs, "agentwork.target.pollers")
	items := gauges(t, obs, "agentwork.work.items")
	if slots["target=hold"] != 1 || limit["target=hold"] != 1 || limit["target=*"] != 8 /* work.WithMaxRunning's default */ ||
		pollers["target=hold"] != 1 || pollers["target=lost"] != 0 || items["state=queued,target=lost"] != 1 {
		t.Fatalf("gauges: slots %v limit %v pollers %v items %v", slots, limit, pollers, items)
	}
	if _, ok := slots["target=lost"]; ok {
		t.Fatalf("the deployment view exported slots: %v", slots)
	}
	if age := gauges(t, obs, "agentwork.work.oldest_cancel_requested_age")["target=hold"]; age <= 0 {
		t.Fatalf("oldest cancel-requested age %v, want > 0 from the worker", age)
	}
	page := obs.obs.Status()
	if page.More != 1 || len(page.Work) != 4 { // 3 deployment rows + the worker's attempt
		t.Fatalf("status page: more %d, %d rows", page.More, len(page.Work))
	}
	// No content reaches the gauges or the status page: the Works' input
	// carries the canary.
	js, err := json.Marshal(page)
	if err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := obs.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), censusCanary) || strings.Contains(fmt.Sprintf("%+v", rm), censusCanary) {
		t.Fatal("the status page or a gauge carries a Work's input")
	}
	for _, r := range runs {
		close(r.release)
	}
	if err := eng.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Snapshot(t.Context()); !errors.Is(err, work.ErrClosed) {
		t.Fatalf("Snapshot after Close: %v, want ErrClosed", err)
	}
	if _, err := (&work.Engine{}).Snapshot(t.Context()); !errors.Is(err, work.ErrNotInitialized) {
		t.Fatalf("zero Engine's Snapshot: %v, want ErrNotInitialized", err)
	}
}

const censusCanary = "CANARY-census-9c1f"

func targetCounts(s observe.Snapshot) map[string]observe.TargetCounts {
	m := map[string]observe.TargetCounts{}
	for _, tc := range s.Counts {
		m[tc.Target] = tc
	}
	return m
}
