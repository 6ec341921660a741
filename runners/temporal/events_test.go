package temporal_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

// replayRecorder records live events (enginetest.Recorder), Binds and replayed
// events separately.
type replayRecorder struct {
	enginetest.Recorder
	mu       sync.Mutex
	binds    []observe.Event
	replayed []observe.Event
}

func (r *replayRecorder) Bind(_, exec context.Context, e observe.Event) context.Context {
	r.mu.Lock()
	r.binds = append(r.binds, e)
	r.mu.Unlock()
	return exec
}

func (r *replayRecorder) Replay(_ context.Context, e observe.Event) {
	r.mu.Lock()
	r.replayed = append(r.replayed, e)
	r.mu.Unlock()
}

func (r *replayRecorder) snapshot() (binds, replayed []observe.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.binds), slices.Clone(r.replayed)
}

// of returns the events of Work id.
func of(evs []observe.Event, id string) []observe.Event {
	var out []observe.Event
	for _, e := range evs {
		if e.WorkID == id {
			out = append(out, e)
		}
	}
	return out
}

func types(evs []observe.Event) string {
	s := make([]string, len(evs))
	for i, e := range evs {
		s[i] = string(e.Type)
	}
	return strings.Join(s, ",")
}

// workHistory returns a workflow's whole history.
func workHistory(t *testing.T, c client.Client, id string) *historypb.History {
	t.Helper()
	h := &historypb.History{}
	it := c.GetWorkflowHistory(context.Background(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	return h
}

// holdersGone waits until no guidance holder of Work id is left
// (deletion is asynchronous).
func holdersGone(t *testing.T, c client.Client, id string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: namespace(), Query: "WorkflowType = '" + temporal.GuidanceWorkflowName + "'"})
		if err != nil {
			t.Fatal(err)
		}
		left := 0
		for _, ex := range resp.Executions {
			if strings.HasPrefix(ex.GetExecution().GetWorkflowId(), "agentwork-guidance/"+id+"/") {
				left++
			}
		}
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Work %s: %d guidance holders left after a minute", id, left)
		}
		time.Sleep(100 * time.Millisecond) // polling an asynchronous deletion
	}
}

// settle waits (Result's capped waits) until Work id is terminal.
func settle(t *testing.T, eng *work.Engine, o work.Owner, id string) (work.Status, string) {
	t.Helper()
	for {
		st, out, err := eng.Result(context.Background(), o, id, work.MaxResultWait)
		if err != nil {
			t.Fatal(err)
		}
		if st.State.Terminal() {
			return st, out
		}
	}
}

var eventQueues int

// TestLifecycleEvents: a Work's lifecycle events reach the Observer of the
// Worker running its workflow, in order, each once, with the Work's
// identity and content-free figures, and the terminal event before Result
// returns the terminal state; the coordinator's Observer gets the refused
// start, the first result read and the detach of the ended Work. A worker
// that lost a running workflow from its cache binds the Work again at the
// first live event and replays the events before it, reporting none of
// them again; a replay of a closed workflow's whole history binds and
// reports nothing.
func TestLifecycleEvents(t *testing.T) {
	c := server(t)
	wrec, erec := &replayRecorder{}, &enginetest.Recorder{}
	running := make(chan struct{}, 1)
	eng, queue := deploy(t, "events", map[string]temporal.Child{
		"steer": {Kind: work.KindAgent, Run: func(ctx context.Context, _ string) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			for {
				if g := boundary.Guidance(ex); len(g) > 0 {
					return "steered", nil
				}
				select {
				case <-ctx.Done():
					return "", ctx.Err()
				case <-time.After(20 * time.Millisecond): // a model boundary every 20ms
				}
			}
		}},
		"turns": {Kind: work.KindAgent, Run: func(ctx context.Context, _ string) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			work.ReportProgress(ctx, 1, 4)
			for {
				turn, err := boundary.BeginRequest(ex)
				if err != nil {
					return "", err
				}
				boundary.EndRequest(ex, 7, 3, true)
				if turn.Final {
					return "final", nil
				}
			}
		}},
		"block": {Kind: work.KindAgent, Run: func(ctx context.Context, _ string) (string, error) {
			running <- struct{}{}
			<-ctx.Done()
			return "", ctx.Err()
		}},
	}, []temporal.Option{temporal.WithOptions(work.WithObserver(wrec)), temporal.WithHeartbeatTimeout(5 * time.Second)},
		[]temporal.Option{temporal.WithOptions(work.WithObserver(erec)), temporal.WithOptions(work.WithMaxStarts(3))})
	o := work.NewOwner("events-owner-" + queue)
	start := func(label string) (string, error) {
		ref, err := eng.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: label, Kind: work.KindAgent},
			Input: "x", Run: func(context.Context) (string, error) { return "", nil }})
		return ref.ID, err
	}

	steer, err := start("steer")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Send(t.Context(), o, steer, "call-1", "go on"); err != nil {
		t.Fatal(err)
	}
	st, out := settle(t, eng, o, steer)
	if st.State != work.StateCompleted || out != "steered" {
		t.Fatalf("steer ended %s %q", st.State, out)
	}
	// Read at once: the terminal event came before Result's answer.
	evs := of(wrec.Events(), steer)
	if got := types(evs); got != "queued,guidance-accepted,running,guidance-delivered,completed" &&
		got != "queued,running,guidance-accepted,guidance-delivered,completed" {
		t.Fatalf("steer's events = %s", got)
	}
	for _, e := range evs {
		if e.Owner != o.ID() || e.Target != "steer" || e.Kind != work.KindAgent || e.Time.IsZero() {
			t.Errorf("event %s lacks the Work's identity: %+v", e.Type, e)
		}
	}
	last := evs[len(evs)-1]
	if last.From != work.StateRunning || last.To != work.StateCompleted || last.Bytes != len("steered") || last.Duration <= 0 {
		t.Errorf("completed event = %+v", last)
	}
	for _, e := range evs {
		switch e.Type {
		case observe.EventGuidanceAccepted, observe.EventGuidanceDelivered:
			if e.Count != 1 {
				t.Errorf("%s count = %d, want 1", e.Type, e.Count)
			}
		case observe.EventRunning:
			if e.From != work.StateQueued || e.QueueWait < 0 {
				t.Errorf("running event = %+v", e)
			}
		}
	}
	if _, _, err := eng.Result(context.Background(), o, steer, 0); err != nil {
		t.Fatal(err)
	}
	var reads []observe.Event
	for _, e := range of(erec.Events(), steer) {
		if e.Type == observe.EventResultRead {
			reads = append(reads, e)
		}
	}
	if len(reads) != 1 || reads[0].Bytes != len("steered") || reads[0].Owner != o.ID() || reads[0].Target != "steer" {
		t.Errorf("result reads reported = %+v, want one of %d bytes", reads, len("steered"))
	}
	// Detaching the ended Work is reported (by the coordinator: the
	// workflow has closed), as in-process.
	if _, err := eng.Detach(t.Context(), o, steer); err != nil {
		t.Fatal(err)
	}
	var detached []observe.Event
	for _, e := range of(append(erec.Events(), wrec.Events()...), steer) {
		if e.Type == observe.EventDetached {
			detached = append(detached, e)
		}
	}
	if len(detached) != 1 || detached[0].Owner != o.ID() || detached[0].Target != "steer" || detached[0].Time.IsZero() {
		t.Errorf("detached events of the ended Work = %+v, want one", detached)
	}

	block, err := start("block")
	if err != nil {
		t.Fatal(err)
	}
	<-running
	// The worker loses the workflow from its cache: the next workflow
	// task replays the history (a take-over), binds the Work again at the
	// first live event (the guidance accepted) and replays the events
	// before it; nothing is reported twice.
	worker.PurgeStickyWorkflowCache()
	// Guidance the child never takes (twice the same command: one holder
	// is a duplicate) is dropped when the Work ends; every holder deletes
	// itself.
	for range 2 {
		if _, err := eng.Send(t.Context(), o, block, "call-2", "never taken"); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := eng.Cancel(t.Context(), o, block); err != nil || !r.Accepted {
		t.Fatalf("cancel: %+v %v", r, err)
	}
	if st, _ := settle(t, eng, o, block); st.State != work.StateCancelled {
		t.Fatalf("block ended %s", st.State)
	}
	bevs := of(wrec.Events(), block)
	if got := types(bevs); got != "queued,running,guidance-accepted,cancel-requested,guidance-dropped,cancelled" {
		t.Fatalf("block's events = %s", got)
	}
	if e := bevs[5]; e.From != work.StateCancelRequested {
		t.Errorf("cancelled event = %+v", e)
	}
	binds, replayed := wrec.snapshot()
	if binds, replayed = of(binds, block), of(replayed, block); len(binds) != 2 || types(replayed) != "queued,running" {
		t.Errorf("take-over: %d binds, replayed %s; want 2 binds, replayed queued,running", len(binds), types(replayed))
	}
	for i := range min(len(replayed), len(bevs)) {
		if !replayed[i].Time.Equal(bevs[i].Time) {
			t.Errorf("replayed %s at %v, live at %v", replayed[i].Type, replayed[i].Time, bevs[i].Time)
		}
	}
	for _, id := range []string{steer, block} {
		holdersGone(t, c, id)
	}

	// The attempt's own events (progress, budget, usage) come from the
	// worker running it, before the terminal event.
	sp := work.Spec{Owner: o, Target: work.Target{Label: "turns", Kind: work.KindAgent}, Input: "x",
		Budget: work.Budget{MaxTurns: 1}, Run: func(context.Context) (string, error) { return "", nil }}
	ref, err := eng.Start(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	if st, out := settle(t, eng, o, ref.ID); st.State != work.StateCompleted || out != "final" || st.BudgetExhausted != observe.BudgetTurns {
		t.Fatalf("turns ended %s %q (budget %q)", st.State, out, st.BudgetExhausted)
	}
	tevs := of(wrec.Events(), ref.ID)
	if got := types(tevs); got != "queued,running,progress,budget-exhausted,usage,completed" {
		t.Fatalf("turns' events = %s", got)
	}
	if p := tevs[2].Progress; p.Done != 1 || p.Total != 4 {
		t.Errorf("progress = %+v", p)
	}
	if e := tevs[3]; e.Budget != observe.BudgetTurns || e.Target != "turns" || e.Owner != o.ID() {
		t.Errorf("budget event = %+v", e)
	}
	if u := tevs[4].Usage; u.Turns != 1 || u.InputTokens != 14 || u.OutputTokens != 6 {
		t.Errorf("usage = %+v", u)
	}

	if _, err := start("steer"); !errors.Is(err, work.ErrLimit) {
		t.Fatalf("third start: %v, want the starts limit", err)
	}
	var refused []observe.Event
	for _, e := range erec.Events() {
		if e.Type == observe.EventRefused {
			refused = append(refused, e)
		}
	}
	if len(refused) != 1 || refused[0].ErrorClass != observe.LimitStarts || refused[0].Owner != o.ID() || refused[0].Target != "steer" {
		t.Errorf("refused events = %+v", refused)
	}
	if n := len(of(erec.Events(), block)); n != 0 {
		t.Errorf("the coordinator reported %d lifecycle events of the cancelled Work; the workflow reports them", n)
	}

	// A replay of the whole history (a query of the closed workflow)
	// reports, binds and replays nothing.
	for _, id := range []string{steer, block} {
		h := workHistory(t, c, id)
		rr := &replayRecorder{}
		if err := temporal.ReplayWork(h, rr); err != nil {
			t.Fatal(err)
		}
		binds, replayed := rr.snapshot()
		if len(rr.Events()) != 0 || len(binds) != 0 || len(replayed) != 0 {
			t.Errorf("replay of the closed history: %d live, %d binds, %d replayed; want none",
				len(rr.Events()), len(binds), len(replayed))
		}
	}
}

// TestTelemetry: under the telemetry Observer, a Work on Temporal has one
// invoke_agent span linked to its launch span, with its events at their
// workflow times, and the lifecycle metrics; a replay of a closed
// workflow's history exports no span, and a worker that takes a running
// workflow over exports the Work's one span, rebuilt whole, counting
// each transition once.
func TestTelemetry(t *testing.T) {
	c := server(t)
	live := newObserved(t, nil)
	obs, spans, reader := live.obs, live.spans, live.reader
	running := make(chan struct{}, 1)
	eng, queue := deploy(t, "telemetry", map[string]temporal.Child{
		"ok": {Kind: work.KindAgent, Run: func(context.Context, string) (string, error) { return "done", nil }},
		"block": {Kind: work.KindAgent, Run: func(ctx context.Context, _ string) (string, error) {
			running <- struct{}{}
			<-ctx.Done()
			return "", ctx.Err()
		}},
	}, []temporal.Option{temporal.WithOptions(work.WithObserver(obs)), temporal.WithHeartbeatTimeout(5 * time.Second)},
		[]temporal.Option{temporal.WithOptions(work.WithObserver(obs))})
	o := work.NewOwner("telemetry-owner-" + queue)
	lctx, launch := sdktrace.NewTracerProvider().Tracer("app").Start(context.Background(), "execute_tool ok")
	ref, err := eng.Start(lctx, work.Spec{Owner: o, Target: work.Target{Label: "ok", Kind: work.KindAgent},
		Input: "x", Run: func(context.Context) (string, error) { return "", nil }})
	launch.End()
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := settle(t, eng, o, ref.ID); st.State != work.StateCompleted {
		t.Fatalf("ended %s", st.State)
	}
	work1 := invokeSpans(spans.Ended(), ref.ID)
	if len(work1) != 1 {
		t.Fatalf("%d invoke_agent spans for the Work, want 1", len(work1))
	}
	sp := work1[0]
	if sp.Name() != "invoke_agent ok" {
		t.Errorf("span name %q", sp.Name())
	}
	if l := sp.Links(); len(l) != 1 || l[0].SpanContext.SpanID() != launch.SpanContext().SpanID() ||
		l[0].SpanContext.TraceID() != launch.SpanContext().TraceID() {
		t.Errorf("links = %+v, want the launch span", l)
	}
	var names []string
	for _, e := range sp.Events() {
		names = append(names, e.Name)
	}
	if got := strings.Join(names, ","); got != "agentwork.work.queued,agentwork.work.running,agentwork.work.completed" {
		t.Errorf("span events = %s", got)
	}
	counts := transitions(t, reader)
	for _, s := range []string{"queued", "running", "completed"} {
		if counts[s] != 1 {
			t.Errorf("transitions{state=%s} = %d, want 1 (all: %v)", s, counts[s], counts)
		}
	}

	// A replay of the whole history (a query of the closed workflow, on a
	// worker that does not cache it) exports no span and records nothing.
	replayed := newObserved(t, nil)
	if err := temporal.ReplayWork(workHistory(t, c, ref.ID), replayed.obs); err != nil {
		t.Fatal(err)
	}
	if n := len(invokeSpans(replayed.spans.Ended(), ref.ID)); n != 0 {
		t.Errorf("a replay of the closed history exported %d spans for the Work, want 0", n)
	}
	if n := transitions(t, replayed.reader); len(n) != 0 {
		t.Errorf("replay recorded transitions %v", n)
	}
	if l := replayed.logs.String(); l != "" {
		t.Errorf("replay logged %s", l)
	}

	// A take-over (the worker lost the running workflow from its cache):
	// the span is rebuilt with the events before it at their times and
	// exported once, and each transition is counted once.
	ref, err = eng.Start(lctx, work.Spec{Owner: o, Target: work.Target{Label: "block", Kind: work.KindAgent},
		Input: "x", Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	<-running
	worker.PurgeStickyWorkflowCache()
	if r, err := eng.Cancel(t.Context(), o, ref.ID); err != nil || !r.Accepted {
		t.Fatalf("cancel: %+v %v", r, err)
	}
	if st, _ := settle(t, eng, o, ref.ID); st.State != work.StateCancelled {
		t.Fatalf("ended %s", st.State)
	}
	taken := invokeSpans(spans.Ended(), ref.ID)
	if len(taken) != 1 {
		t.Fatalf("%d invoke_agent spans for the Work taken over, want 1", len(taken))
	}
	names = names[:0]
	for _, e := range taken[0].Events() {
		names = append(names, e.Name)
	}
	if got := strings.Join(names, ","); got != "agentwork.work.queued,agentwork.work.running,agentwork.work.cancel_requested,agentwork.work.cancelled" {
		t.Errorf("span events of the Work taken over = %s", got)
	}
	if l := taken[0].Links(); len(l) != 1 || l[0].SpanContext.SpanID() != launch.SpanContext().SpanID() {
		t.Errorf("links of the Work taken over = %+v", l)
	}
	counts = transitions(t, reader)
	for _, s := range []string{"queued", "running"} {
		if counts[s] != 2 {
			t.Errorf("transitions{state=%s} = %d, want 2 (all: %v)", s, counts[s], counts)
		}
	}
}

func invokeSpans(spans []sdktrace.ReadOnlySpan, id string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		for _, a := range s.Attributes() {
			if a.Key == "agentwork.work.id" && a.Value.AsString() == id {
				out = append(out, s)
			}
		}
	}
	return out
}

// transitions returns agentwork.work.transitions by state.
func transitions(t *testing.T, reader *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if m.Name != "agentwork.work.transitions" || !ok {
				continue
			}
			for _, dp := range sum.DataPoints {
				v, _ := dp.Attributes.Value(attribute.Key("state"))
				out[v.AsString()] += dp.Value
			}
		}
	}
	return out
}
