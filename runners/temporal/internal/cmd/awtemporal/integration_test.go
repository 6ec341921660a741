//go:build integration

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/agentwork/agentwork/runners/harness"
	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/runners/temporal/internal/testcodec"
)

// TestIntegrationTemporal runs the Temporal runner across processes on the
// Temporal CLI's dev server (TEMPORAL_BIN): two worker processes and a
// coordinator process (AWTEMPORAL_BIN, this package built), with SIGKILLed
// workers, a restarted coordinator, cancel and guidance across processes,
// and the canary check of every history, log and span file. make
// integration-temporal runs it.
func TestIntegrationTemporal(t *testing.T) {
	temporalBin, self := os.Getenv("TEMPORAL_BIN"), os.Getenv("AWTEMPORAL_BIN")
	if temporalBin == "" || self == "" {
		t.Skip("TEMPORAL_BIN and AWTEMPORAL_BIN are unset (make integration-temporal sets them)")
	}
	dir := os.Getenv("AWTEMPORAL_LOGS")
	if dir == "" {
		dir = t.TempDir()
	}
	cl := newCluster(self, dir)
	t.Cleanup(cl.stop)
	svc := newBatchService()
	hs := httptest.NewServer(svc) // on 127.0.0.1
	t.Cleanup(hs.Close)
	cl.jobs = hs.URL
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := cl.startServer(); err != nil {
		t.Fatal(err)
	}
	t.Logf("dev server at %s; logs in %s", cl.hostPort, dir)
	workers := map[string]*proc{}
	startWorker := func(name string) {
		t.Helper()
		p, err := cl.startWorker(name)
		if err != nil {
			t.Fatal(err)
		}
		workers[name] = p
	}
	startWorker("worker-a")
	startWorker("worker-b")
	other := map[string]string{"worker-a": "worker-b", "worker-b": "worker-a"}
	tc, err := client.Dial(client.Options{HostPort: cl.hostPort, Namespace: namespace, DataConverter: dataConverter(), Logger: slogAdapter{nopLogger()}})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	co, err := cl.startCoordinator("coordinator-1", "integration")
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	start := func(co *coordinator, label, input string) (string, string) {
		t.Helper()
		id, err := co.Start(label, input)
		must(err)
		w, err := cl.waitStarted(id, "", 2*time.Minute)
		must(err)
		return id, w
	}
	var ids []string
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		// For the post-mortem: each Work's history (event types) in dir.
		for _, id := range append(ids, "agentwork-owner/integration") {
			out, _ := exec.Command(temporalBin, "workflow", "show", "--address", cl.hostPort, "--namespace", namespace,
				"--workflow-id", id).CombinedOutput()
			_ = os.WriteFile(filepath.Join(dir, "history-"+filepath.Base(id)+".txt"), out, 0o644)
		}
	})

	// 1. A worker dies (SIGKILL) while its child runs: the Work is not
	// replayed; it fails with class worker_lost.
	lost, w := start(co, "slow", "0 "+CanaryInput)
	ids = append(ids, lost)
	workers[w].Kill()
	var outcome struct{ State, Class string }
	must(tc.GetWorkflow(ctx, lost, "").Get(ctx, &outcome))
	if outcome.State != "failed" || outcome.Class != "worker_lost" {
		t.Fatalf("killed worker: outcome %+v, want failed worker_lost", outcome)
	}
	r, err := co.Settled(lost, time.Minute)
	must(err)
	if r.Status.State != "failed" || r.Status.Attempt != 1 || r.Result != "" || r.Status.Work.Guarantees.Execution != "durable" {
		t.Fatalf("killed worker: status %+v %q, want failed, attempt 1", r.Status, r.Result)
	}
	t.Logf("1. SIGKILL of %s: Work %s failed (worker_lost), attempt 1", w, lost[:8])
	startWorker(w)

	// 2. A retryable child: its attempt dies with its worker, attempt 2
	// runs on the other worker.
	retryDir := filepath.Join(dir, "retry")
	must(os.MkdirAll(retryDir, 0o755))
	retry, w := start(co, "retry", retryDir)
	ids = append(ids, retry)
	workers[w].Kill()
	w2, err := cl.waitStarted(retry, w, 2*time.Minute)
	must(err)
	r, err = co.Settled(retry, 2*time.Minute)
	must(err)
	if r.Status.State != "completed" || r.Status.Attempt != 2 || r.Result != "second attempt on "+other[w] || w2 != other[w] {
		t.Fatalf("retryable: status %+v %q (attempt 2 on %s), want completed by attempt 2 on %s", r.Status, r.Result, w2, other[w])
	}
	t.Logf("2. SIGKILL of %s: retryable Work %s completed by attempt 2 on %s", w, retry[:8], w2)
	startWorker(w)

	// 3. The coordinator dies; its Work completes meanwhile; a new
	// coordinator process with the same owner reads the result.
	gate := filepath.Join(dir, "gate")
	gated, w3 := start(co, "gated", gate)
	ids = append(ids, gated)
	guided, _ := start(co, "slow", "1 "+CanaryInput)
	ids = append(ids, guided)
	co.P.Kill()
	must(os.WriteFile(gate, nil, 0o644))
	must(tc.GetWorkflow(ctx, gated, "").Get(ctx, nil))
	co, err = cl.startCoordinator("coordinator-2", "integration")
	must(err)
	var list []harness.Status
	must(co.Do(&list, "list"))
	if len(list) != 4 {
		t.Fatalf("list after the restart: %d Work, want 4", len(list))
	}
	r, err = co.Settled(gated, time.Minute)
	must(err)
	if r.Status.State != "completed" || r.Result != "gated on "+w3+" "+CanaryOutput {
		t.Fatalf("result after the restart: %+v %q", r.Status, r.Result)
	}
	t.Logf("3. coordinator restarted: read Work %s's result, completed while no coordinator ran", gated[:8])

	// 4. Guidance and cancel across processes (coordinator -> Temporal ->
	// worker), from the restarted coordinator to Work started before.
	var sr struct {
		Outcome string `json:"outcome"`
		Cursor  string `json:"cursor"`
	}
	must(co.Do(&sr, "send", guided, "call-1", CanaryGuidance))
	if sr.Outcome != "accepted" || sr.Cursor != "1" {
		t.Fatalf("send: %+v", sr)
	}
	var again struct{ Cursor string }
	must(co.Do(&again, "send", guided, "call-1", CanaryGuidance)) // the same call: idempotent
	if again.Cursor != "1" {
		t.Fatalf("repeated send: cursor %s, want 1", again.Cursor)
	}
	r, err = co.Settled(guided, time.Minute)
	must(err)
	if r.Status.State != "completed" || !strings.HasPrefix(r.Result, "took guidance "+Digest([]string{CanaryGuidance})+" on ") ||
		!strings.HasSuffix(r.Result, " "+CanaryOutput) {
		t.Fatalf("guided Work: %+v %q, want completed with the guidance's digest", r.Status, r.Result)
	}
	cancelled, _ := start(co, "slow", "0 "+CanaryInput)
	ids = append(ids, cancelled)
	var cr struct {
		Accepted bool   `json:"accepted"`
		State    string `json:"state"`
	}
	must(co.Do(&cr, "cancel", cancelled))
	if !cr.Accepted || cr.State != "cancel-requested" {
		t.Fatalf("cancel: %+v", cr)
	}
	r, err = co.Settled(cancelled, time.Minute)
	must(err)
	if r.Status.State != "cancelled" {
		t.Fatalf("cancelled Work: %+v", r.Status)
	}
	must(co.Do(&cr, "cancel", cancelled))
	if cr.Accepted || cr.State != "cancelled" {
		t.Fatalf("cancel of cancelled Work: %+v, want not accepted", cr)
	}
	failed, _ := start(co, "fail", CanaryInput)
	ids = append(ids, failed)
	r, err = co.Settled(failed, time.Minute)
	must(err)
	if r.Status.State != "failed" || r.Result != "" {
		t.Fatalf("failing Work: %+v %q", r.Status, r.Result)
	}
	t.Logf("4. guidance delivered across processes (Work %s), cancel (Work %s), failure (Work %s)", guided[:8], cancelled[:8], failed[:8])

	// 5. A job waits at the fake batch service; the worker that polled
	// it last is SIGKILLed right after a poll: the next polls run on the
	// other worker, the job completes there, and it was submitted once.
	var jr struct{ Work string }
	must(co.Do(&jr, "job", "nightly"))
	job := jr.Work
	ids = append(ids, job)
	ws, err := cl.waitPolled(job, func(ws []string) bool { return len(ws) >= 2 }, 2*time.Minute)
	must(err)
	victim := ws[len(ws)-1]
	workers[victim].Kill()
	cl.mu.Lock()
	atKill := len(cl.polled[job])
	cl.mu.Unlock()
	ws, err = cl.waitPolled(job, func(ws []string) bool { return len(ws) > atKill }, 2*time.Minute)
	must(err)
	if last := ws[len(ws)-1]; last != other[victim] {
		t.Fatalf("job: a poll after the SIGKILL of %s ran on %s", victim, last)
	}
	svc.finish(job)
	r, err = co.Settled(job, 2*time.Minute)
	must(err)
	if r.Status.State != "completed" || r.Result != "batch nightly done" {
		t.Fatalf("job after the SIGKILL: %+v %q, want completed", r.Status, r.Result)
	}
	if subs := svc.submitted(); len(subs) != 1 || subs[job] != 1 {
		t.Fatalf("job: submits %v, want one, keyed by the Work id", subs)
	}
	t.Logf("5. SIGKILL of %s between polls: job %s polled again on %s (%d polls by then), completed, submitted once", victim, job[:8], other[victim], len(ws))
	startWorker(victim)

	// 6. A Work that needs approval; the coordinator dies; a new
	// coordinator process lists the request and approves it: it runs.
	var hr struct{ Work string }
	must(co.Do(&hr, "held", "gated", gate))
	held := hr.Work
	ids = append(ids, held)
	co.P.Kill()
	co, err = cl.startCoordinator("coordinator-3", "integration")
	must(err)
	var pending []struct {
		Work struct {
			ID string `json:"id"`
		}
		Input string
	}
	must(co.Do(&pending, "pending"))
	if len(pending) != 1 || pending[0].Work.ID != held || pending[0].Input != gate {
		t.Fatalf("pending after the restart: %+v, want %s", pending, held)
	}
	must(co.Do(nil, "approve", held))
	r, err = co.Settled(held, 2*time.Minute)
	must(err)
	if r.Status.State != "completed" || !strings.HasPrefix(r.Result, "gated on ") {
		t.Fatalf("approved after the restart: %+v %q", r.Status, r.Result)
	}
	t.Logf("6. coordinator restarted: approved Work %s, which then ran", held[:8])

	// 7. The canary: histories (read with the CLI), logs and spans.
	show := func(id string) []byte {
		t.Helper()
		out, err := exec.Command(temporalBin, "workflow", "show", "--address", cl.hostPort, "--namespace", namespace,
			"--workflow-id", id, "--output", "json").Output()
		if err != nil {
			t.Fatalf("temporal workflow show %s: %v", id, err)
		}
		if !json.Valid(out) {
			t.Fatalf("temporal workflow show %s: not JSON", id)
		}
		return decodePayloads(out)
	}
	// Every process runs under the test codec (TestMain): no history
	// holds a canary in plaintext, not even the Work's own input and
	// result, which it holds sealed.
	canaries := []string{CanaryInput, CanaryOutput, CanaryFailure, CanaryGuidance}
	for _, id := range ids {
		h := show(id)
		for _, c := range canaries {
			if bytes.Contains(h, []byte(c)) {
				t.Errorf("the history of Work %s holds %s in plaintext under the codec", id, c)
			}
		}
	}
	if res := sealedResult(t, tc, gated); !strings.Contains(res, CanaryOutput) {
		t.Errorf("the completed Work's result opened with the codec is %q, want it to hold %s: the canary check cannot see payloads", res, CanaryOutput)
	}
	// Guidance lived in holder workflows, deleted once taken or dropped
	// (asynchronously: poll).
	for deadline := time.Now().Add(time.Minute); ; {
		out, err := exec.Command(temporalBin, "workflow", "list", "--address", cl.hostPort, "--namespace", namespace,
			"--query", "WorkflowType = '"+temporal.GuidanceWorkflowName+"'", "--output", "json").Output()
		if err != nil {
			t.Fatalf("temporal workflow list: %v", err)
		}
		if !bytes.Contains(out, []byte("agentwork-guidance/")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("guidance holders left a minute after the Work ended: %s", out)
		}
		time.Sleep(200 * time.Millisecond) // polling an asynchronous deletion
	}
	reg := show("agentwork-owner/integration")
	for _, c := range canaries {
		if bytes.Contains(reg, []byte(c)) {
			t.Errorf("the owner registry's history holds %s", c)
		}
	}
	cl.stop() // flush and close every process before the logs are read
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	spans, _ := filepath.Glob(filepath.Join(dir, "*.spans"))
	if len(spans) < 3 {
		t.Errorf("span files: %d, want one per worker and coordinator", len(spans))
	}
	var nspans int
	workSpans := map[string]int{} // Work id -> its agentwork invoke_agent spans, in every process
	for _, f := range append(files, spans...) {
		b, err := os.ReadFile(f)
		must(err)
		if strings.HasSuffix(f, ".spans") {
			nspans += bytes.Count(b, []byte("\n"))
			for _, line := range strings.Split(string(b), "\n") {
				if !strings.HasPrefix(line, "invoke_agent ") {
					continue
				}
				for _, id := range ids {
					if strings.Contains(line, " agentwork.work.id="+id+" ") {
						workSpans[id]++
					}
				}
			}
		}
		if strings.Contains(filepath.Base(f), "coordinator") && strings.HasSuffix(f, ".log") {
			// The coordinator's stdout is the model-facing answers
			// (results included); only its stderr is a log.
			b = stderrOnly(b)
		}
		for _, c := range canaries {
			if bytes.Contains(b, []byte(c)) {
				t.Errorf("%s holds %s", filepath.Base(f), c)
			}
		}
	}
	if nspans == 0 {
		t.Error("no span was recorded: the telemetry canary check saw nothing")
	}
	// Every Work's lifecycle span was exported once, by whichever worker
	// ran its workflow last (rebuilt there after a worker was killed).
	for _, id := range ids {
		if workSpans[id] != 1 {
			t.Errorf("Work %s: %d invoke_agent spans across the processes, want 1", id, workSpans[id])
		}
	}
	t.Logf("7. canary: %d histories, %d log files, %d spans checked", len(ids)+1, len(files), nspans)
}

// batchService is the fake external batch service: a job per
// idempotency key (a repeated submit finds it), waiting until finish.
type batchService struct {
	mu      sync.Mutex
	submits map[string]int
	inputs  map[string]string // handle -> input
	done    map[string]bool   // handle -> finished
}

func newBatchService() *batchService {
	return &batchService{submits: map[string]int{}, inputs: map[string]string{}, done: map[string]bool{}}
}

func (b *batchService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := r.URL.Query()
	switch r.URL.Path {
	case "/submit":
		key := q.Get("key")
		b.submits[key]++
		b.inputs["h-"+key] = q.Get("input")
		_ = json.NewEncoder(w).Encode(map[string]string{"Handle": "h-" + key})
	case "/poll":
		h := q.Get("handle")
		in, ok := b.inputs[h]
		switch {
		case !ok:
			_ = json.NewEncoder(w).Encode(map[string]string{"Key": strings.TrimPrefix(h, "h-"), "State": "failed"})
		case b.done[h]:
			_ = json.NewEncoder(w).Encode(map[string]string{"Key": strings.TrimPrefix(h, "h-"), "State": "done", "Output": "batch " + in + " done"})
		default:
			_ = json.NewEncoder(w).Encode(map[string]string{"Key": strings.TrimPrefix(h, "h-"), "State": "waiting"})
		}
	case "/cancel":
		delete(b.inputs, q.Get("handle"))
	default:
		http.NotFound(w, r)
	}
}

func (b *batchService) finish(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done["h-"+key] = true
}

func (b *batchService) submitted() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]int{}
	for k, v := range b.submits {
		out[k] = v
	}
	return out
}

func stderrOnly(b []byte) []byte {
	var out []byte
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if !bytes.HasPrefix(l, []byte("stdout: ")) {
			out = append(out, l...)
		}
	}
	return out
}

// decodePayloads returns the CLI's JSON with every base64 string in it
// decoded and appended (payload data is base64 in protojson), so that a
// canary inside a payload is found either way.
func decodePayloads(js []byte) []byte {
	out := append([]byte(nil), js...)
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		case string:
			if b, err := base64.StdEncoding.DecodeString(x); err == nil {
				out = append(append(out, '\n'), b...)
			}
		}
	}
	var v any
	if json.Unmarshal(js, &v) == nil {
		walk(v)
	}
	return out
}

// sealedResult returns the result payload of workflow id's completion
// event as the history stores it: sealed by the test codec (its encoding
// says so, or the test fails), then opened with the codec and decoded.
func sealedResult(t *testing.T, c client.Client, id string) string {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		done := ev.GetWorkflowExecutionCompletedEventAttributes()
		if done == nil {
			continue
		}
		ps := done.GetResult().GetPayloads()
		if len(ps) != 1 || string(ps[0].GetMetadata()[converter.MetadataEncoding]) != testcodec.Encoding {
			t.Fatalf("Work %s's result as stored: %d payloads, encoding %q; want one sealed by the test codec", id, len(ps), ps[0].GetMetadata()[converter.MetadataEncoding])
		}
		var out struct{ Output string }
		if err := dataConverter().FromPayloads(done.GetResult(), &out); err != nil {
			t.Fatalf("Work %s's result under the codec: %v", id, err)
		}
		return out.Output
	}
	t.Fatalf("Work %s's history has no completion event", id)
	return ""
}
