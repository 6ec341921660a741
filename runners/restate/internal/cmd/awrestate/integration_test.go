//go:build integration

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestIntegrationRestate runs the Restate runner across processes on a
// real Restate server: a registry process, two service processes behind
// the balancer and coordinator processes (AWRESTATE_BIN, this package
// built), with SIGKILLed service processes, a restarted coordinator,
// cancel and guidance across processes, and the canary check of Restate's
// stored state and journal (its SQL introspection), every process's log
// and span file and the server's log. make integration-restate runs it.
func TestIntegrationRestate(t *testing.T) {
	self := os.Getenv("AWRESTATE_BIN")
	if self == "" {
		t.Skip("AWRESTATE_BIN is unset (make integration-restate sets it)")
	}
	dir := os.Getenv("AWRESTATE_LOGS")
	if dir == "" {
		dir = t.TempDir()
	}
	cl := newCluster(self, dir)
	t.Cleanup(cl.stop)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(cl.start())
	ctx := context.Background()
	admin := cl.srv.Admin
	t.Logf("Restate server: ingress %s, admin %s; balancer %s; logs in %s", cl.srv.Ingress, admin, cl.lb.URL, dir)
	services := map[string]*proc{}
	startService := func(name string) {
		t.Helper()
		p, err := cl.startWorker(name)
		must(err)
		services[name] = p
	}
	startService("service-a")
	startService("service-b")
	other := map[string]string{"service-a": "service-b", "service-b": "service-a"}
	co, err := cl.startCoordinator("coordinator-1", "integration")
	must(err)
	// Restate (its node, ingress and admin ports), the balancer and the
	// three service processes listen; on 127.0.0.1 only.
	if n := checkLoopback(t, cl); n < 7 {
		t.Fatalf("ss saw %d listening sockets of the cluster, want at least 7", n)
	} else {
		t.Logf("0. the cluster's %d listening sockets are on 127.0.0.1", n)
	}
	start := func(co *coordinator, label, input string) (string, string) {
		t.Helper()
		id, err := co.Start(label, input)
		must(err)
		w, err := cl.waitStarted(id, 1, 2*time.Minute)
		must(err)
		return id, w
	}
	var ids []string

	// 1. A service process dies (SIGKILL) while its child runs: the Work
	// is not replayed; it fails with class worker_lost.
	lost, w := start(co, "slow", "0 "+CanaryInput)
	ids = append(ids, lost)
	cl.killWorker(services[w])
	r, err := co.Settled(lost, 2*time.Minute)
	must(err)
	if r.Status.State != "failed" || r.Class != "worker_lost" || r.Status.Attempt != 1 || r.Result != "" ||
		r.Status.Work.Guarantees.Execution != "durable" {
		t.Fatalf("killed service process: %+v, want failed worker_lost, attempt 1, durable", r)
	}
	t.Logf("1. SIGKILL of %s: Work %s failed (worker_lost), attempt 1", w, lost[:8])
	startService(w)

	// 2. A retryable child: its attempt dies with its process, attempt 2
	// runs on the other one.
	retryDir := filepath.Join(dir, "retry")
	must(os.MkdirAll(retryDir, 0o755))
	retry, w := start(co, "retry", retryDir)
	ids = append(ids, retry)
	cl.killWorker(services[w])
	w2, err := cl.waitStarted(retry, 2, 2*time.Minute)
	must(err)
	r, err = co.Settled(retry, 2*time.Minute)
	must(err)
	if r.Status.State != "completed" || r.Status.Attempt != 2 || r.Result != "second attempt on "+other[w] || w2 != other[w] {
		t.Fatalf("retryable: %+v (attempt 2 on %s), want completed by attempt 2 on %s", r, w2, other[w])
	}
	t.Logf("2. SIGKILL of %s: retryable Work %s completed by attempt 2 on %s", w, retry[:8], w2)
	startService(w)

	// 3. The coordinator dies; a Work completes meanwhile (seen in
	// Restate's invocation table); a new coordinator process with the same
	// owner lists its Work and reads the result.
	gate := filepath.Join(dir, "gate")
	gated, w3 := start(co, "gated", gate)
	guided, _ := start(co, "slow", "1 "+CanaryInput)
	doomed, _ := start(co, "slow", "0 "+CanaryInput)
	deafGate := filepath.Join(dir, "deaf-gate")
	deaf, _ := start(co, "deaf", deafGate)
	ids = append(ids, gated, guided, doomed, deaf)
	co.P.Kill()
	must(os.WriteFile(gate, nil, 0o644))
	must(waitInvocation(ctx, admin, "agentwork.Work.gated/"+gated+"/Run", "completed", time.Minute))
	co, err = cl.startCoordinator("coordinator-2", "integration")
	must(err)
	var list []struct {
		Work struct {
			ID string `json:"id"`
		} `json:"work"`
		State string `json:"state"`
	}
	must(co.Do(&list, "list"))
	listed := map[string]string{}
	for _, s := range list {
		listed[s.Work.ID] = s.State
	}
	if len(list) != len(ids) || listed[gated] != "completed" || listed[guided] != "running" || listed[lost] != "failed" {
		t.Fatalf("list after the restart: %+v, want the %d Work of the owner", list, len(ids))
	}
	r, err = co.Settled(gated, time.Minute)
	must(err)
	if r.Status.State != "completed" || r.Result != "gated on "+w3+" "+CanaryOutput {
		t.Fatalf("result after the restart: %+v", r)
	}
	t.Logf("3. coordinator restarted: listed %d Work, read Work %s's result, completed while no coordinator ran", len(list), gated[:8])

	// 4. Guidance and cancel across processes (coordinator -> Restate ->
	// service process), from the restarted coordinator to Work started
	// before it.
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
		t.Fatalf("guided Work: %+v, want completed with the guidance's digest", r)
	}
	var cr struct {
		Accepted bool   `json:"accepted"`
		State    string `json:"state"`
	}
	must(co.Do(&cr, "cancel", doomed))
	if !cr.Accepted || cr.State != "cancel-requested" {
		t.Fatalf("cancel: %+v", cr)
	}
	r, err = co.Settled(doomed, time.Minute)
	must(err)
	if r.Status.State != "cancelled" {
		t.Fatalf("cancelled Work: %+v", r)
	}
	must(co.Do(&cr, "cancel", doomed))
	if cr.Accepted || cr.State != "cancelled" {
		t.Fatalf("cancel of cancelled Work: %+v, want not accepted", cr)
	}
	failed, _ := start(co, "fail", CanaryInput)
	ids = append(ids, failed)
	r, err = co.Settled(failed, time.Minute)
	must(err)
	if r.Status.State != "failed" || r.Class != "error" || r.Result != "" {
		t.Fatalf("failing Work: %+v", r)
	}
	t.Logf("4. guidance delivered across processes (Work %s), cancel (Work %s), failure (Work %s)", guided[:8], doomed[:8], failed[:8])

	// 5. Guidance that is never taken: in Restate while the Work runs
	// (the canary check can see it), gone once the Work ended.
	must(co.Do(&sr, "send", deaf, "call-1", CanaryGuidance))
	if sr.Outcome != "accepted" {
		t.Fatalf("send to the deaf Work: %+v", sr)
	}
	// Every process seals content (TestMain): the guidance is there
	// sealed, not in plaintext.
	if found := restateHolds(t, admin, cl.srv.Ingress, CanaryGuidance); len(found) > 0 {
		t.Errorf("queued guidance is in plaintext in Restate's %s under the content key", strings.Join(found, ", "))
	}
	if found := restateHolds(t, admin, cl.srv.Ingress, sealedPrefix); len(found) == 0 {
		t.Fatal("no sealed content is in Restate's state: the canary check cannot see it")
	} else {
		t.Logf("5. queued guidance sealed in Restate's %s while its Work runs", strings.Join(found, ", "))
	}
	must(os.WriteFile(deafGate, nil, 0o644))
	r, err = co.Settled(deaf, time.Minute)
	must(err)
	if r.Status.State != "completed" {
		t.Fatalf("deaf Work: %+v", r)
	}

	// 6. A Work that needs approval, its input a canary; the coordinator
	// dies; a new coordinator process lists the request and approves it:
	// it runs.
	var hr struct{ Work string }
	must(co.Do(&hr, "held", "gated", gate+" "+CanaryInput))
	held := hr.Work
	ids = append(ids, held)
	co.P.Kill()
	co, err = cl.startCoordinator("coordinator-3", "integration")
	must(err)
	var pending []struct {
		Work struct {
			ID string `json:"id"`
		} `json:"work"`
		Input string `json:"input"`
	}
	must(co.Do(&pending, "pending"))
	if len(pending) != 1 || pending[0].Work.ID != held || pending[0].Input != gate+" "+CanaryInput {
		t.Fatalf("pending after the restart: %+v, want %s", pending, held)
	}
	must(co.Do(nil, "approve", held))
	r, err = co.Settled(held, 2*time.Minute)
	must(err)
	if r.Status.State != "completed" || !strings.HasPrefix(r.Result, "gated on ") {
		t.Fatalf("approved after the restart: %+v", r)
	}
	t.Logf("6. coordinator restarted: listed the approval request of Work %s and approved it; it ran", held[:8])

	// 7. The registry process dies (SIGKILL) while a Work runs and comes
	// back at its URL: the Work's control object answers again (Restate
	// kept its state), guidance reaches the child, the Work completes.
	survivor, _ := start(co, "slow", "1 "+CanaryInput)
	ids = append(ids, survivor)
	registry, ok := cl.Named("registry")
	if !ok {
		t.Fatal("no registry process")
	}
	registry.Kill()
	_, err = cl.startRegistry()
	must(err)
	must(co.Do(&sr, "send", survivor, "call-1", CanaryGuidance))
	r, err = co.Settled(survivor, 2*time.Minute)
	must(err)
	if r.Status.State != "completed" || !strings.HasPrefix(r.Result, "took guidance "+Digest([]string{CanaryGuidance})+" on ") {
		t.Fatalf("Work across the registry's restart: %+v", r)
	}
	t.Logf("7. registry process SIGKILLed and restarted at its URL: Work %s took its guidance and completed", survivor[:8])

	// The canary in Restate: every table of its introspection schema
	// (state, journal, invocations, promises...) and the answers it keeps
	// of completed ingress calls (a day by default, each with an
	// idempotency key of Restate's when the caller gave none). Under the
	// content key no canary is there in plaintext: input, output and
	// guidance are sealed, and failure text never gets there.
	for _, c := range []string{CanaryInput, CanaryOutput, CanaryGuidance, CanaryFailure} {
		if found := restateHolds(t, admin, cl.srv.Ingress, c); len(found) > 0 {
			t.Errorf("Restate's %s hold %s in plaintext:\n%s", strings.Join(found, ", "), c, journalHolding(t, admin, c))
		}
	}
	if found := restateHolds(t, admin, cl.srv.Ingress, sealedPrefix); len(found) == 0 {
		t.Error("no sealed content is in Restate's tables: the canary check cannot see payloads")
	} else {
		t.Logf("   sealed content is in Restate's %s", strings.Join(found, ", "))
	}

	// 8. The canary in every process's log and span file and in the
	// server's log; one invoke_agent span per Work across the processes.
	cl.stop() // flush and end every process before the logs are read
	for _, p := range cl.All() {
		if p.Cmd.ProcessState == nil {
			t.Errorf("process %s still runs", p.Name)
		}
	}
	canaries := []string{CanaryInput, CanaryOutput, CanaryFailure, CanaryGuidance}
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	spans, _ := filepath.Glob(filepath.Join(dir, "*.spans"))
	if len(files) < 6 || len(spans) < 6 {
		t.Errorf("%d log and %d span files, want one each per process", len(files), len(spans))
	}
	var nspans int
	workSpans := map[string]int{}
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
			if strings.HasSuffix(f, "coordinator-2.log") && !bytes.Contains(b, []byte(CanaryOutput)) {
				t.Error("the coordinator's answers lack a result: the log check cannot see content")
			}
			b = stderrOnly(b)
		}
		for _, c := range canaries {
			if bytes.Contains(b, []byte(c)) {
				t.Errorf("%s holds %s", filepath.Base(f), c)
			}
		}
	}
	for _, c := range canaries {
		if strings.Contains(cl.srv.Logs(), c) {
			t.Errorf("the Restate server's log holds %s", c)
		}
	}
	if nspans == 0 {
		t.Error("no span was recorded: the telemetry canary check saw nothing")
	}
	for _, id := range ids {
		if workSpans[id] != 1 {
			t.Errorf("Work %s: %d invoke_agent spans across the processes, want 1", id, workSpans[id])
		}
	}
	t.Logf("8. canary: Restate's tables, %d log files, %d spans and the server's log checked; one invoke_agent span for each of %d Work",
		len(files), nspans, len(ids))
}

// sealedPrefix opens every string field restate.WithContentKeys sealed.
const sealedPrefix = "agentwork-sealed-v1:"

// restateHolds returns the introspection tables, and the retained
// outputs of idempotent invocations, holding s.
func restateHolds(t *testing.T, admin, ingress, s string) []string {
	t.Helper()
	tables, err := storedTables(context.Background(), admin)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	seen := 0
	for _, table := range tables {
		b, _, err := dumpTable(context.Background(), admin, table)
		if err != nil {
			if table == "state" || table == "sys_journal" || table == "sys_invocation" {
				t.Fatal(err)
			}
			continue // a table that needs a filter to be read
		}
		seen++
		if bytes.Contains(b, []byte(s)) {
			found = append(found, table)
		}
	}
	if seen < 3 {
		t.Fatalf("read %d of Restate's tables %v", seen, tables)
	}
	outs, n, err := retainedOutputs(context.Background(), admin, ingress)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no retained output of an idempotent invocation: the check reads nothing")
	}
	for target, b := range outs {
		if bytes.Contains(b, []byte(s)) {
			found = append(found, "the retained output of "+target)
		}
	}
	return found
}

// journalHolding describes the journal entries holding s: their
// invocation's target and status, index and type.
func journalHolding(t *testing.T, admin, s string) string {
	t.Helper()
	rows, err := query(context.Background(), admin, "SELECT j.id, j.index, j.entry_type, j.name, i.target, i.status, i.completion_retention, i.journal_retention "+
		"FROM sys_journal j JOIN sys_invocation i ON j.id = i.id")
	if err != nil {
		return err.Error()
	}
	full, err := query(context.Background(), admin, "SELECT * FROM sys_journal")
	if err != nil {
		return err.Error()
	}
	holding := map[string]bool{}
	for _, r := range full {
		var b bytes.Buffer
		decodeAll(&b, r)
		js, _ := json.Marshal(r)
		if bytes.Contains(b.Bytes(), []byte(s)) || bytes.Contains(js, []byte(s)) {
			holding[fmt.Sprint(r["id"], "/", r["index"])] = true
		}
	}
	var out strings.Builder
	for _, r := range rows {
		if holding[fmt.Sprint(r["id"], "/", r["index"])] {
			js, _ := json.Marshal(r)
			fmt.Fprintf(&out, "  %s\n", js)
		}
	}
	return out.String()
}

// waitInvocation waits until the invocation of target (service/key/handler)
// has status, reading Restate's invocation table.
func waitInvocation(ctx context.Context, admin, target, status string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		rows, err := query(ctx, admin, "SELECT status FROM sys_invocation WHERE target = '"+target+"'")
		if err != nil {
			return err
		}
		if len(rows) == 1 && rows[0]["status"] == status {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("invocation %s: %v within %s, want %s", target, rows, timeout, status)
		}
		time.Sleep(100 * time.Millisecond) // polling another process's progress
	}
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
