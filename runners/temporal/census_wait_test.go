package temporal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// gatedJobs is a job target whose submit of an input starting "slow"
// blocks until submitGate closes and whose poll of a handle starting
// "poll" blocks until pollGate closes (then answers done); each reports
// that it began. Other submits return at once, other polls answer
// waiting.
type gatedJobs struct {
	submitting, polling  chan struct{}
	submitGate, pollGate chan struct{}
	began, opened        [2]sync.Once
}

func newGatedJobs() *gatedJobs {
	return &gatedJobs{submitting: make(chan struct{}), polling: make(chan struct{}),
		submitGate: make(chan struct{}), pollGate: make(chan struct{})}
}

// openSubmit and openPoll let the blocked submit or poll return.
func (g *gatedJobs) openSubmit() { g.opened[0].Do(func() { close(g.submitGate) }) }
func (g *gatedJobs) openPoll()   { g.opened[1].Do(func() { close(g.pollGate) }) }

func (g *gatedJobs) job() *work.Job {
	return &work.Job{
		Submit: func(_ context.Context, key, input string) ([]byte, error) {
			if strings.HasPrefix(input, "slow") {
				g.began[0].Do(func() { close(g.submitting) })
				<-g.submitGate
			}
			return []byte(input), nil
		},
		Await: func(_ context.Context, h []byte) (work.Poll, error) {
			if strings.HasPrefix(string(h), "poll") {
				g.began[1].Do(func() { close(g.polling) })
				<-g.pollGate
				return work.Poll{State: work.PollDone, Output: "done"}, nil
			}
			return work.Poll{State: work.PollWaiting}, nil
		},
	}
}

// TestDeploymentWaits: the coordinator's deployment Snapshot counts the
// Work that waits as the in-process engine does. Three jobs: one between
// polls (an hour's backoff), one whose poll is in progress (polls hold no
// slot), one whose submit is in progress (it holds one of the Worker's
// slots, and is running, not waiting); two Works awaiting approval (queued,
// outside the task queue: not in Snapshot.Queued nor in the queued age).
// The counts, the oldest approval, the rows, the gauges and the status page
// say so; the Worker's own Snapshot has the submit's slot only. Then the
// submit returns (three jobs wait, no slot) and one approval is given (one
// awaits).
func TestDeploymentWaits(t *testing.T) {
	c := server(t)
	eventQueues++
	queue := "deploywaits-" + strconv.Itoa(eventQueues)
	obs := newObserved(t, nil)
	g := newGatedJobs()
	base := []temporal.Option{temporal.WithTaskQueue(queue), temporal.WithRPCTimeout(time.Minute), temporal.WithOptions(work.WithObserver(obs.obs))}
	w, err := temporal.NewWorker(c, map[string]temporal.Child{"batch": {Kind: work.KindFunction, Job: g.job()}, "hold": holdChild},
		append(base, temporal.WithOptions(work.WithMaxRunning(2)))...)
	if err != nil || w.Start() != nil {
		t.Fatal("worker", err)
	}
	t.Cleanup(w.Stop)
	eng := temporal.New(c, append(base, temporal.WithOptions(work.WithDeploymentGauges()), temporal.WithNamespace(namespace()),
		temporal.WithOptions(work.WithSnapshotInterval(time.Second)), temporal.WithOptions(work.WithStatusRows(5)))...)
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	t.Cleanup(func() { g.openSubmit(); g.openPoll() }) // before the Worker stops

	o := work.NewOwner("deploywaits-" + strconv.FormatInt(time.Now().UnixNano(), 36))
	start := func(spec work.Spec) work.Ref {
		t.Helper()
		ref, err := eng.Start(t.Context(), spec)
		if err != nil {
			t.Fatal(err)
		}
		return ref
	}
	between := jobSpec(o, "idle "+censusCanary, g.job())
	between.Job.Backoff = work.Backoff{Initial: time.Hour, Max: time.Hour}
	idle := start(between)
	// Its submit has returned (its slot is back) once it waits.
	eventually(t, "the first job's wait", func() bool {
		st, err := eng.Status(t.Context(), o, idle.ID)
		return err == nil && st.Waiting
	})
	polled := jobSpec(o, "poll "+censusCanary, g.job())
	polled.Job.Backoff = fastBackoff
	poll := start(polled)
	<-g.polling
	slow := start(jobSpec(o, "slow "+censusCanary, g.job()))
	<-g.submitting
	var held []work.Ref
	for i := range 2 {
		in := fmt.Sprintf("%s-approve-%d %s", o.ID(), i, censusCanary)
		newHoldRun(t, in)
		held = append(held, start(work.Spec{Owner: o, Target: work.Target{Label: "hold", Kind: work.KindFunction}, Input: in,
			NeedsApproval: true, Run: func(ctx context.Context) (string, error) { return holdChild.Run(ctx, in) }}))
	}

	// The Worker: the submit holds a slot; the poll and the waits do not.
	ws, _ := w.Snapshot(t.Context())
	wc := targetCounts(ws)
	if wc["batch"].SlotsInUse != 1 || wc["hold"].SlotsInUse != 0 || ws.SlotsInUse != 1 || len(ws.Live) != 1 ||
		ws.Live[0].ID != slow.ID || ws.Live[0].State != work.StateRunning || ws.Live[0].Kind != work.KindFunction {
		t.Fatalf("worker snapshot %+v; want the submit's slot only", ws)
	}

	var snap observe.Snapshot
	eventually(t, "the deployment's waits", func() bool {
		snap, err = eng.Snapshot(t.Context())
		tc := targetCounts(snap)
		return err == nil && tc["batch"].Waiting == 2 && tc["hold"].AwaitingApproval == 2 && len(snap.Live) == 5
	})
	tc := targetCounts(snap)
	queued, running := 0, 1
	if b := tc["batch"]; b.Counts[queued] != 0 || b.Counts[running] != 3 || b.AwaitingApproval != 0 || !b.OldestApproval.IsZero() {
		t.Fatalf("batch counts %+v; want 3 running, 2 of them waiting", b)
	}
	if h := tc["hold"]; h.Counts[queued] != 2 || h.Counts[running] != 0 || h.Waiting != 0 || h.OldestQueued != 0 {
		t.Fatalf("hold counts %+v; want 2 queued awaiting approval, none in the task queue", h)
	}
	if snap.Queued != 0 || snap.Waiting != 2 || snap.AwaitingApproval != 2 || snap.LiveOmitted != 0 {
		t.Fatalf("snapshot totals: queued %d waiting %d awaiting %d omitted %d", snap.Queued, snap.Waiting, snap.AwaitingApproval, snap.LiveOmitted)
	}
	rows := map[string]observe.LiveWork{}
	for _, lw := range snap.Live {
		rows[lw.ID] = lw
	}
	for _, id := range []string{idle.ID, poll.ID} {
		if lw := rows[id]; lw.State != work.StateRunning || !lw.Waiting || lw.Started.IsZero() || lw.AwaitingApproval {
			t.Fatalf("waiting job's row %+v", lw)
		}
	}
	if lw := rows[slow.ID]; lw.State != work.StateRunning || lw.Waiting || lw.Started.IsZero() {
		t.Fatalf("submitting job's row %+v; want running, not waiting", lw)
	}
	for _, r := range held {
		if lw := rows[r.ID]; lw.State != work.StateQueued || !lw.AwaitingApproval || !lw.Enqueued.IsZero() || lw.Owner != o.ID() {
			t.Fatalf("row awaiting approval %+v", lw)
		}
	}
	if first := rows[held[0].ID].Created; first.IsZero() || !tc["hold"].OldestApproval.Equal(first) {
		t.Fatalf("oldest approval %v; want the first request's %v", tc["hold"].OldestApproval, first)
	}

	// Through the Observer: the gauges of issue 23 and the status page.
	waiting := gauges(t, obs, "agentwork.work.waiting")
	awaiting := gauges(t, obs, "agentwork.work.awaiting_approval")
	age := gauges(t, obs, "agentwork.work.oldest_approval_age")
	queuedAge := gauges(t, obs, "agentwork.work.oldest_queued_age")
	slots := gauges(t, obs, "agentwork.work.slots_in_use")
	if waiting["target=batch"] != 2 || awaiting["target=hold"] != 2 || age["target=hold"] <= 0 ||
		age["target=hold"] > time.Since(rows[held[0].ID].Created).Seconds()+1 || queuedAge["target=hold"] != 0 ||
		slots["target=batch"] != 1 || slots["target=hold"] != 0 {
		t.Fatalf("gauges: waiting %v awaiting %v oldest approval %v oldest queued %v slots %v", waiting, awaiting, age, queuedAge, slots)
	}
	page := obs.obs.Status()
	if page.Waits.Waiting != 2 || page.Waits.AwaitingApproval != 2 || page.Waits.OldestApprovalAgeSeconds <= 0 || page.Queue.Length != 0 {
		t.Fatalf("status page waits %+v, queue %+v", page.Waits, page.Queue)
	}
	marked := map[string]int{}
	for _, r := range page.Work {
		switch {
		case r.Waiting:
			marked["waiting"]++
		case r.AwaitingApproval:
			marked["approval"]++
		}
	}
	if marked["waiting"] != 2 || marked["approval"] != 2 {
		t.Fatalf("status rows marked %v", marked)
	}
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

	// The submit returns: its slot goes back and it waits. One approval
	// is given: its Work runs (the hold child), one awaits.
	g.openSubmit()
	if err := eng.Approve(t.Context(), work.Approver(), held[0].ID); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deployment after the submit and the approval", func() bool {
		snap, err = eng.Snapshot(t.Context())
		tc := targetCounts(snap)
		return err == nil && tc["batch"].Waiting == 3 && tc["hold"].AwaitingApproval == 1 && tc["hold"].Counts[running] == 1
	})
	if tc := targetCounts(snap); !tc["hold"].OldestApproval.Equal(rows[held[1].ID].Created) || snap.AwaitingApproval != 1 {
		t.Fatalf("after the approval: %+v", tc["hold"])
	}
	eventually(t, "the submit's slot back", func() bool {
		ws, _ := w.Snapshot(t.Context())
		return targetCounts(ws)["batch"].SlotsInUse == 0
	})
}

// TestDeploymentApprovalsWithoutWorker: the approvals index is read with
// a query, which needs a worker to answer. With no worker left, a
// refresh still succeeds within the RPC timeout, the index's last answer
// standing in (the rest of the view, the pollers above all, is still
// reported).
func TestDeploymentApprovalsWithoutWorker(t *testing.T) {
	c := server(t)
	eventQueues++
	queue := "deploynoworker-" + strconv.Itoa(eventQueues)
	base := []temporal.Option{temporal.WithTaskQueue(queue), temporal.WithRPCTimeout(time.Minute)}
	w, err := temporal.NewWorker(c, map[string]temporal.Child{"hold": holdChild}, base...)
	if err != nil || w.Start() != nil {
		t.Fatal("worker", err)
	}
	var stop sync.Once
	t.Cleanup(func() { stop.Do(w.Stop) })
	eng := temporal.New(c, base...)
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	// The deployment view's Engine: its calls bounded by 2 s.
	view := temporal.New(c, temporal.WithTaskQueue(queue), temporal.WithRPCTimeout(2*time.Second), temporal.WithNamespace(namespace()),
		temporal.WithOptions(work.WithSnapshotInterval(time.Second)), temporal.WithOptions(work.WithDeploymentGauges("hold")))
	t.Cleanup(func() { _ = view.Close(context.Background()) })

	o := work.NewOwner("deploynoworker-" + strconv.FormatInt(time.Now().UnixNano(), 36))
	if _, err := eng.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "hold", Kind: work.KindFunction},
		NeedsApproval: true, Run: func(context.Context) (string, error) { return "", nil }}); err != nil {
		t.Fatal(err)
	}
	var snap observe.Snapshot
	eventually(t, "the approval in the deployment view", func() bool {
		snap, err = view.Snapshot(t.Context())
		return err == nil && snap.AwaitingApproval == 1
	})
	stop.Do(w.Stop)
	stopped := time.Now()
	eventually(t, "a refresh without a worker", func() bool {
		snap, err = view.Snapshot(t.Context())
		if err != nil {
			t.Fatalf("refresh without a worker: %v", err)
		}
		return snap.Time.After(stopped)
	})
	if tc := targetCounts(snap)["hold"]; snap.AwaitingApproval != 1 || tc.AwaitingApproval != 1 || tc.Counts[0] != 1 || snap.Queued != 0 {
		t.Fatalf("without a worker: %+v", snap)
	}
}
