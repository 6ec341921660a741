package restate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

const censusCanary = "CANARY-restate-census-5e2b"

// held are the hold child's runs by input: started is closed when it
// runs, release lets it return (it ignores its context until then, so a
// cancel leaves it cancel-requested).
var held sync.Map // input -> *heldRun

type heldRun struct{ started, release chan struct{} }

func newHeldRun(t *testing.T, in string) *heldRun {
	r := &heldRun{started: make(chan struct{}), release: make(chan struct{})}
	held.Store(in, r)
	t.Cleanup(func() { r.free(); held.Delete(in) })
	return r
}

func (r *heldRun) free() {
	select {
	case <-r.release:
	default:
		close(r.release)
	}
}

var holdChild = restate.Child{Kind: work.KindAgent, Run: func(ctx context.Context, in string) (string, error) {
	v, _ := held.Load(in)
	r := v.(*heldRun)
	close(r.started)
	<-r.release
	return "held", nil
}}

// adminRecorder is a reverse proxy in front of Restate's admin API that
// keeps the bodies of the introspection queries' answers.
type adminRecorder struct {
	mu      sync.Mutex
	answers []string
}

func (a *adminRecorder) start(t *testing.T, admin string) string {
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	p := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(u)
		r.Out.Host = r.In.Host              // as NewSingleHostReverseProxy's Director leaves it
		r.Out.Header.Del("Accept-Encoding") // the answers are recorded as sent
	}}
	p.ModifyResponse = func(r *http.Response) error {
		if r.Request.URL.Path != "/query" {
			return nil
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		_ = r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(b))
		a.mu.Lock()
		a.answers = append(a.answers, string(b))
		a.mu.Unlock()
		return nil
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv.URL
}

func (a *adminRecorder) all() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.answers...)
}

// gauges returns metric name's points as "k=v,..." -> value.
func gauges(t *testing.T, reader *sdkmetric.ManualReader, name string) map[string]float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
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

func byTarget(s observe.Snapshot) map[string]observe.TargetCounts {
	m := map[string]observe.TargetCounts{}
	for _, tc := range s.Counts {
		m[tc.Target] = tc
	}
	return m
}

func counts(q, r, c int) [len(observe.States)]int {
	var n [len(observe.States)]int
	n[0], n[1], n[2] = q, r, c
	return n
}

// TestDeploymentView: a Worker whose per-target limit is 1 runs one of
// three Works of target hold (two wait for its slot); one queued Work is
// cancelled, the running one asked to cancel (its child ignores it), and
// it is sent guidance it never takes; a Work of target quick completes.
// The coordinator's Engine (work.WithDeploymentGauges) reports the exact live
// counts by state from Restate's introspection, the oldest queued age,
// the registered targets, the newest row with the rest counted; the
// Worker its slot, limit and cancel-requested attempt; both through one
// telemetry Observer, whose gauges and status page read them. Neither the
// Work's input nor its waiting guidance reaches an answer of the admin
// API, a gauge, the status page or a log line. It runs as is, and with
// content sealed at rest (WithContentKeys): the view reads the same
// fields, and the waiting guidance is stored sealed.
func TestDeploymentView(t *testing.T) {
	t.Run("plain", func(t *testing.T) { deploymentView(t, nil) })
	t.Run("sealed", func(t *testing.T) { deploymentView(t, restate.WithContentKeys(contentKey)) })
}

func deploymentView(t *testing.T, sealed restate.Option) {
	s := server(t)
	reader := sdkmetric.NewManualReader()
	var logs bytes.Buffer
	var logMu sync.Mutex
	obs, err := telemetry.New(telemetry.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))),
		telemetry.WithLogger(slog.New(slog.NewJSONHandler(lockedWriter{&logMu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = obs.Unregister() })
	var rec adminRecorder
	admin := rec.start(t, s.Admin)
	base := []restate.Option{restate.WithServicePrefix("t" + strconv.FormatInt(namespaces.Add(1), 10)),
		restate.WithIngress(s.Ingress), restate.WithAdmin(admin), restate.WithRPCTimeout(time.Minute),
		restate.WithOptions(work.WithObserver(obs)), sealed}
	// An external job: waiting from its submit until jobDone.
	polled, jobDone := make(chan struct{}), make(chan struct{})
	var pollOnce sync.Once
	job := &work.Job{
		Submit: func(context.Context, string, string) ([]byte, error) { return []byte("h"), nil },
		Await: func(context.Context, []byte) (work.Poll, error) {
			pollOnce.Do(func() { close(polled) }) // polled: its Work is waiting
			select {
			case <-jobDone:
				return work.Poll{State: work.PollDone, Output: "done"}, nil
			default:
				return work.Poll{State: work.PollWaiting}, nil
			}
		},
		Backoff: work.Backoff{Initial: 20 * time.Millisecond, Max: 50 * time.Millisecond}}
	defer func() {
		select {
		case <-jobDone:
		default:
			close(jobDone)
		}
	}()
	w, err := restate.NewWorker(map[string]restate.Child{"hold": holdChild, "job": {Kind: work.KindFunction, Job: job},
		"quick": {Kind: work.KindFunction, Run: func(context.Context, string) (string, error) { return "ok", nil }}},
		append(base, restate.WithRegistry(), restate.WithOptions(work.WithMaxRunning(1)))...)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	// The interval outlasts the test's reads, which then see one view.
	eng := restate.New(append(base, restate.WithOptions(work.WithDeploymentGauges("idle")), restate.WithOptions(work.WithSnapshotInterval(time.Hour)),
		restate.WithOptions(work.WithStatusRows(1)))...)
	t.Cleanup(func() { _ = eng.Close(context.Background()) })

	o := work.NewOwner("census-" + strconv.FormatInt(time.Now().UnixNano(), 36))
	var refs []work.Ref
	var runs []*heldRun
	began := time.Now()
	for i := range 3 {
		in := o.ID() + "-" + strconv.Itoa(i) + " " + censusCanary
		runs = append(runs, newHeldRun(t, in))
		ref, err := eng.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "hold", Kind: work.KindAgent}, Input: in,
			Run: func(ctx context.Context) (string, error) { return holdChild.Run(ctx, in) }})
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
		if i == 0 {
			<-runs[0].started // the first takes the worker's one slot
		}
	}
	// A Work that awaits its approval: queued, out of the dispatch queue.
	ap, err := eng.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "hold", Kind: work.KindAgent},
		Input: "approval " + censusCanary, NeedsApproval: true, Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	testStart := time.Now()
	jw, err := eng.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "job", Kind: work.KindFunction},
		Input: "job " + censusCanary, Job: job})
	if err != nil {
		t.Fatal(err)
	}
	<-polled
	q, err := eng.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "quick", Kind: work.KindFunction}, Input: censusCanary,
		Run: func(context.Context) (string, error) { return "ok", nil }})
	if err != nil {
		t.Fatal(err)
	}
	if st, _, err := eng.Result(t.Context(), o, q.ID, time.Minute); err != nil || st.State != work.StateCompleted {
		t.Fatalf("quick: %+v, %v", st, err)
	}
	if _, err := eng.Cancel(t.Context(), o, refs[1].ID); err != nil { // queued: cancelled
		t.Fatal(err)
	}
	if _, err := eng.Cancel(t.Context(), o, refs[0].ID); err != nil { // running: cancel-requested
		t.Fatal(err)
	}
	if _, err := eng.Send(t.Context(), o, refs[0].ID, "", "guidance "+censusCanary); err != nil {
		t.Fatal(err)
	}

	// The Worker's attempt sees the cancel at its next poll.
	deadline := time.Now().Add(time.Minute)
	ws, _ := w.Snapshot(t.Context())
	for len(ws.Live) != 1 || ws.Live[0].State != work.StateCancelRequested {
		if time.Now().After(deadline) {
			t.Fatalf("worker snapshot %+v", ws)
		}
		time.Sleep(20 * time.Millisecond) // the attempt polls its Work's state
		ws, _ = w.Snapshot(t.Context())
	}
	wt := byTarget(ws)
	if ws.Live[0].ID != refs[0].ID || ws.Live[0].CancelAt.IsZero() || ws.Live[0].Owner != o.ID() ||
		wt["hold"].SlotsInUse != 1 || wt["hold"].MaxRunning != 1 || wt["quick"].SlotsInUse != 0 ||
		wt["quick"].MaxRunning != 1 || ws.SlotsInUse != 1 || ws.MaxRunning != 0 || ws.Deployment {
		t.Fatalf("worker snapshot %+v", ws)
	}

	// Every transition above was applied before its call returned: the
	// first refresh sees them all.
	snap, err := eng.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rec.all()); n != 3 {
		t.Fatalf("a refresh made %d queries, want 3", n)
	}
	tc := byTarget(snap)
	hold := tc["hold"]
	if !snap.Deployment || snap.Queued != 1 || snap.SlotsInUse != 0 || snap.MaxRunning != 0 ||
		hold.Counts != counts(2, 0, 1) || hold.Pollers != 1 || hold.AwaitingApproval != 1 || hold.Waiting != 0 ||
		tc["quick"].Counts != counts(0, 0, 0) || tc["quick"].Pollers != 1 || tc["job"].Counts != counts(0, 1, 0) ||
		tc["job"].Waiting != 1 || tc["job"].Pollers != 1 || len(tc) != 4 ||
		tc["idle"].Counts != counts(0, 0, 0) || tc["idle"].Pollers != 0 || snap.Waiting != 1 || snap.AwaitingApproval != 1 {
		t.Fatalf("deployment snapshot %+v", snap)
	}
	// Restate's clock and ours agree on the ages (the same machine): the
	// oldest queued Work's invocation was created after the first start
	// began, and the approval Work asked for its approval when it was
	// created (during its Start).
	if age := time.Since(began); hold.OldestQueued <= 0 || hold.OldestQueued > age ||
		hold.OldestApproval.Before(began) || hold.OldestApproval.After(testStart) {
		t.Fatalf("ages: oldest queued %v (first start %v ago), oldest approval %v (between %v and %v)",
			hold.OldestQueued, age, hold.OldestApproval, began, testStart)
	}
	rows := map[string]observe.LiveWork{}
	for _, lw := range snap.Live {
		rows[lw.Target] = lw
	}
	if r := rows["hold"]; len(snap.Live) != 2 || snap.LiveOmitted != 2 || r.ID != ap.ID || r.State != work.StateQueued ||
		!r.AwaitingApproval || r.Owner != o.ID() || r.Kind != work.KindAgent || r.Created.IsZero() {
		t.Fatalf("rows %+v, omitted %d: want hold's newest, awaiting approval", snap.Live, snap.LiveOmitted)
	}
	if r := rows["job"]; r.ID != jw.ID || r.State != work.StateRunning || !r.Waiting || r.Started.IsZero() {
		t.Fatalf("job row %+v: want running, waiting", r)
	}
	// Within the interval the same view is reused: no query.
	before := len(rec.all())
	if again, err := eng.Snapshot(t.Context()); err != nil || !again.Time.Equal(snap.Time) || len(rec.all()) != before {
		t.Fatalf("a second Snapshot within the interval refreshed (%v, %d -> %d queries)", err, before, len(rec.all()))
	}

	// Through the Observer: the Worker's slot and limit, the
	// deployment's counts, queue age and registered targets.
	items := gauges(t, reader, "agentwork.work.items")
	slots := gauges(t, reader, "agentwork.work.slots_in_use")
	limit := gauges(t, reader, "agentwork.work.concurrency_limit")
	pollers := gauges(t, reader, "agentwork.target.pollers")
	if items["state=queued,target=hold"] != 2 || gauges(t, reader, "agentwork.work.awaiting_approval")["target=hold"] != 1 ||
		gauges(t, reader, "agentwork.work.waiting")["target=job"] != 1 || items["state=running,target=job"] != 1 || items["state=cancel-requested,target=hold"] != 1 ||
		items["state=running,target=hold"] != 0 || slots["target=hold"] != 1 || limit["target=hold"] != 1 ||
		pollers["target=hold"] != 1 || pollers["target=quick"] != 1 || pollers["target=idle"] != 0 {
		t.Fatalf("gauges: items %v slots %v limit %v pollers %v", items, slots, limit, pollers)
	}
	if age := gauges(t, reader, "agentwork.work.oldest_queued_age")["target=hold"]; age <= 0 {
		t.Fatalf("oldest queued age %v, want > 0", age)
	}
	if age := gauges(t, reader, "agentwork.work.oldest_cancel_requested_age")["target=hold"]; age <= 0 {
		t.Fatalf("oldest cancel-requested age %v, want > 0 from the worker", age)
	}
	page := obs.Status()
	if page.More != 2 || len(page.Work) != 3 || page.Queue.Length != 1 { // a row per target + the worker's attempt
		t.Fatalf("status page: more %d, %d rows, queue %+v", page.More, len(page.Work), page.Queue)
	}

	// The guidance waits in the Work's control state in Restate (the
	// view below must not carry it), sealed when the keys are on.
	raw := adminQuery(t, s.Admin, "SELECT value_utf8 FROM state WHERE service_key = '"+refs[0].ID+"'")
	switch {
	case sealed == nil && !strings.Contains(raw, censusCanary):
		t.Fatalf("the running Work's guidance is not in its control state: %s", raw)
	case sealed != nil && (strings.Contains(raw, censusCanary) || !strings.Contains(raw, "agentwork-sealed-v1:")):
		t.Fatalf("the running Work's guidance is not sealed in its control state: %s", raw)
	}
	// Content: the admin API's answers, the gauges, the status page and
	// the log lines hold neither the input nor the waiting guidance.
	answers := rec.all()
	if len(answers) < 3 || !strings.Contains(strings.Join(answers, ""), ap.ID) {
		t.Fatalf("the recorded admin answers do not hold the view (%d answers): %q", len(answers), answers)
	}
	js, _ := json.Marshal(page)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	logMu.Lock()
	logged := logs.String()
	logMu.Unlock()
	for what, text := range map[string]string{"an admin answer": strings.Join(answers, "\n"), "the status page": string(js),
		"a gauge": fmt.Sprintf("%+v", rm), "a log line": logged, "the snapshot": fmt.Sprintf("%+v %+v", snap, ws)} {
		if strings.Contains(text, censusCanary) {
			t.Fatalf("%s carries a Work's input or guidance", what)
		}
	}

	// Once the Work ends, a refresh (an Engine whose view ages out in a
	// second) counts none.
	for _, r := range runs {
		r.free()
	}
	if _, err := eng.Cancel(t.Context(), o, ap.ID); err != nil {
		t.Fatal(err)
	}
	close(jobDone)
	for _, ref := range []work.Ref{refs[0], refs[2], ap, jw} {
		if st, _, err := eng.Result(t.Context(), o, ref.ID, time.Minute); err != nil || !st.State.Terminal() {
			t.Fatalf("%s: %+v, %v", ref.ID, st, err)
		}
	}
	later := restate.New(append(base, restate.WithOptions(work.WithSnapshotInterval(time.Second)))...)
	defer func() { _ = later.Close(context.Background()) }()
	deadline = time.Now().Add(time.Minute)
	for snap, err = later.Snapshot(t.Context()); err != nil || byTarget(snap)["hold"].Counts != counts(0, 0, 0) ||
		byTarget(snap)["job"].Counts != counts(0, 0, 0) || len(snap.Live) != 0 || snap.Waiting != 0; snap, err = later.Snapshot(t.Context()) {
		if time.Now().After(deadline) {
			t.Fatalf("after the Work ended: %+v, %v", snap, err)
		}
		time.Sleep(100 * time.Millisecond) // the cached view ages out
	}

	noAdmin := restate.New(restate.WithIngress(s.Ingress))
	defer func() { _ = noAdmin.Close(context.Background()) }()
	if _, err := noAdmin.Snapshot(t.Context()); !errors.Is(err, work.ErrUnavailable) {
		t.Fatalf("Snapshot with no admin API: %v, want ErrUnavailable", err)
	}
	// An admin API that does not answer: the refresh fails, is not
	// cached, and the next call tries again.
	var tries atomic.Int64
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		tries.Add(1)
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	gone := restate.New(restate.WithIngress(s.Ingress), restate.WithAdmin(down.URL), restate.WithOptions(work.WithDeploymentGauges()))
	defer func() { _ = gone.Close(context.Background()) }()
	for i := range 2 {
		if _, err := gone.Snapshot(t.Context()); !errors.Is(err, work.ErrUnavailable) || tries.Load() != int64(i+1) {
			t.Fatalf("Snapshot %d with the admin API down: %v after %d queries, want ErrUnavailable after %d", i, err, tries.Load(), i+1)
		}
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

// adminQuery returns the raw answer of one introspection query.
func adminQuery(t *testing.T, admin, sql string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"query": sql})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, admin+"/query", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("query %q: %s %s %v", sql, resp.Status, b, err)
	}
	return string(b)
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
