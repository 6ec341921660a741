//go:build integration

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/agentwork/agentwork/runners/harness"
)

// chaosBound is each model-facing call's bound during an outage (the
// caller's context): above the runner's RPC timeout (10 s), with the
// work tool's existence check and its action each bounded by it.
const chaosBound = 20 * time.Second

// TestChaosTemporal takes the service away from a Temporal deployment
// (make chaos-durable; .ci/run runs its smoke form, AGENTWORK_CHAOS=smoke:
// the server fault only): the dev server SIGKILLed and restarted on its
// database file, a worker cut off by a TCP proxy, a coordinator killed
// between admission and the Work's start. Each fault meets Work in every
// state (harness.Scene) and is tallied; the table is printed and written
// to AGENTWORK_CHAOS_TABLE. Beside the healthy processes run
// deliberately broken ones (harness.Break*, the worker's rerun), each of
// whose checks must fail.
func TestChaosTemporal(t *testing.T) {
	temporalBin, self := os.Getenv("TEMPORAL_BIN"), os.Getenv("AWTEMPORAL_BIN")
	mode := os.Getenv("AGENTWORK_CHAOS")
	if temporalBin == "" || self == "" || mode == "" {
		t.Skip("TEMPORAL_BIN, AWTEMPORAL_BIN and AGENTWORK_CHAOS are unset (make chaos-durable sets them)")
	}
	dir := os.Getenv("AWTEMPORAL_LOGS")
	if dir == "" {
		dir = t.TempDir()
	} else {
		dir = filepath.Join(dir, "chaos")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cl := newCluster(self, dir)
	cl.durable = true
	t.Cleanup(cl.stop)
	svc := newBatchService()
	hs := httptest.NewServer(svc)
	t.Cleanup(hs.Close)
	cl.jobs = hs.URL
	if err := cl.startServer(); err != nil {
		t.Fatal(err)
	}
	t.Logf("dev server at %s on its database in %s; logs in %s", cl.hostPort, filepath.Join(dir, "temporal"), dir)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range []string{"worker-a", "worker-b"} {
		_, err := cl.startWorker(w, "-max-running", "1")
		must(err)
	}
	tc, err := client.Dial(client.Options{HostPort: cl.hostPort, Namespace: namespace, DataConverter: dataConverter(), Logger: slogAdapter{nopLogger()}})
	must(err)
	defer tc.Close()

	var tallies, broken []*harness.Tally
	tallies = append(tallies, chaosServer(t, cl, tc, svc, dir, &broken))
	if mode != "smoke" {
		tallies = append(tallies, chaosCut(t, cl, dir), chaosAdmission(t, cl, dir))
	}

	var table strings.Builder
	harness.WriteTable(&table, tallies)
	table.WriteString("\ndeliberately broken builds (each row's check must fail):\n")
	harness.WriteTable(&table, broken)
	fmt.Print("\n" + table.String())
	if f := os.Getenv("AGENTWORK_CHAOS_TABLE"); f != "" {
		must(os.WriteFile(f, []byte(table.String()), 0o644))
	}
	for _, tl := range tallies {
		for _, f := range tl.Failures() {
			t.Error(f)
		}
	}
}

// breakCheck is each broken build's check: the one that must fail.
var breakCheck = map[string]string{
	harness.BreakGoError:       harness.CheckGoError,
	harness.BreakNoBound:       harness.CheckUnanswered,
	harness.BreakDropNotice:    harness.CheckNotice,
	harness.BreakSkipAdmission: harness.CheckLost,
	breakRerun:                 harness.CheckDuplicated,
}

// brokenRun is a coordinator of a deliberately broken build, with the
// Work it drove.
type brokenRun struct {
	brk   string
	co    *coordinator
	tally *harness.Tally
	ids   []string
}

// startBroken starts a coordinator per broken build (and, for rerun, a
// worker of its own queue), each driving the one thing its check needs.
func startBroken(t *testing.T, cl *cluster, dir string) []*brokenRun {
	t.Helper()
	var runs []*brokenRun
	for _, brk := range []string{harness.BreakGoError, harness.BreakNoBound, harness.BreakDropNotice, harness.BreakSkipAdmission, breakRerun} {
		r := &brokenRun{brk: brk, tally: &harness.Tally{Runner: "temporal", Fault: "break:" + brk}}
		var extra []string
		switch brk {
		case breakRerun:
			queue := "agentwork-rerun"
			if _, err := cl.startWorker("worker-rerun", "-queue", queue, "-break", breakRerun); err != nil {
				t.Fatal(err)
			}
			extra = []string{"-queue", queue}
		default:
			extra = []string{"-break", brk, "-model-bound", "5s"}
		}
		co, err := cl.startCoordinator("co-"+brk, "break-"+brk, extra...)
		if err != nil {
			t.Fatal(err)
		}
		r.co = co
		switch brk {
		case harness.BreakDropNotice, breakRerun:
			gate := filepath.Join(dir, "open-"+brk)
			if err := os.WriteFile(gate, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			id, err := co.Start("gated", gate)
			if err != nil {
				t.Fatal(err)
			}
			r.ids = append(r.ids, id)
		case harness.BreakSkipAdmission:
			var a harness.Answer
			if err := co.Do(&a, "launch", "gated", "skip-1", filepath.Join(dir, "never")); err != nil {
				t.Fatal(err)
			}
			var ref struct{ ID string }
			_ = json.Unmarshal([]byte(a.Answer), &ref)
			r.ids = append(r.ids, ref.ID)
		}
		runs = append(runs, r)
	}
	return runs
}

// outage runs the broken coordinators' model calls while the service is
// away (those that need it).
func (r *brokenRun) outage(wg *sync.WaitGroup) {
	if r.brk != harness.BreakGoError && r.brk != harness.BreakNoBound {
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		var a harness.Answer
		began := time.Now()
		err := r.co.Do(&a, "tool", "broken-list", `{"action":"list"}`)
		c := harness.ModelCall{What: "tool list", Bound: 5*time.Second + 2*time.Second, Answered: err == nil,
			Answer: a.Answer, GoErr: a.GoErr, Took: time.Duration(a.Ms) * time.Millisecond}
		if err != nil {
			c.Took = time.Since(began)
		}
		r.tally.Calls = append(r.tally.Calls, c)
	}()
}

// collect reads the broken run's Work into its tally.
func (r *brokenRun) collect(cl *cluster) {
	for _, id := range r.ids {
		res, err := r.co.Settled(id, time.Minute)
		cl.mu.Lock()
		starts := cl.starts[id]
		cl.mu.Unlock()
		r.tally.Works = append(r.tally.Works, harness.Seen{ID: id, Label: "gated", Found: err == nil, State: res.Status.State,
			Class: res.Class, Attempt: res.Status.Attempt, Starts: starts, Notify: true})
	}
	var n harness.Notices
	for deadline := time.Now().Add(15 * time.Second); ; {
		if err := r.co.Do(&n, "notices"); (err == nil && len(n.Settled) >= len(r.ids)) || time.Now().After(deadline) {
			break
		}
		time.Sleep(250 * time.Millisecond) // notices come by polling the registry
	}
	for i := range r.tally.Works {
		r.tally.Works[i].Notices = n.Settled[r.tally.Works[i].ID]
	}
}

// chaosServer: the dev server SIGKILLed with Work in every state, kept
// down past the heartbeat timeout while the model calls, restarted on the
// same database file and port.
func chaosServer(t *testing.T, cl *cluster, tc client.Client, svc *batchService, dir string, broken *[]*harness.Tally) *harness.Tally {
	t.Helper()
	tally := &harness.Tally{Runner: "temporal", Fault: "server restart", Forbidden: []string{"worker_lost"}}
	metrics, err := harness.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	co, err := cl.startCoordinator("co-server", "chaos-server", "-deployment", "-snapshot-interval", "1s",
		"-snapshot-timeout", "2s", "-metrics", metrics)
	if err != nil {
		t.Fatal(err)
	}
	alerts := startAlertWatch(t, cl, dir, metrics)
	runs := startBroken(t, cl, dir)
	sc := &harness.Scene{Co: co, Dir: dir, Tally: tally, Settle: 2 * time.Minute,
		WaitStarted: func(id string, d time.Duration) error { _, err := cl.waitStarted(id, "", d); return err },
		Starts:      func(id string) int { cl.mu.Lock(); defer cl.mu.Unlock(); return cl.starts[id] },
		Job: func() (string, error) {
			var jr struct{ Work string }
			if err := co.Do(&jr, "job", "nightly"); err != nil {
				return "", err
			}
			_, err := cl.waitPolled(jr.Work, func(ws []string) bool { return len(ws) >= 1 }, 2*time.Minute)
			return jr.Work, err
		},
		Finish: svc.finish,
		Detached: func(id string) (string, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var out struct{ State, Class string }
			err := tc.GetWorkflow(ctx, id, "").Get(ctx, &out)
			return out.State, err
		},
	}
	if err := sc.Populate(CanaryInput); err != nil {
		t.Fatal(err)
	}
	t.Logf("server: populated; SIGKILL of the dev server")
	cl.killServer()
	down := time.Now()
	var wg sync.WaitGroup
	for _, r := range runs {
		r.outage(&wg)
	}
	if err := sc.Outage(chaosBound); err != nil {
		t.Fatal(err)
	}
	// Down longer than the heartbeat timeout, whatever the calls took.
	if d := 5*heartbeat - time.Since(down); d > 0 {
		time.Sleep(d) // the outage's length is the fault itself
	}
	if err := cl.startServer(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	tally.Notes = append(tally.Notes, fmt.Sprintf("server down %v (heartbeat timeout %v)", restarted.Sub(down).Round(time.Second), heartbeat))
	wg.Wait()
	t.Logf("server: restarted after %v", restarted.Sub(down).Round(time.Second))
	if err := sc.Recover(restarted, CanaryOutput); err != nil {
		t.Fatal(err)
	}
	alerts.check(tally, down, restarted)
	sc.Collect()
	sc.CheckTelemetry(CanaryInput, CanaryOutput, CanaryFailure, CanaryGuidance)
	for _, r := range runs {
		r.collect(cl)
		if !r.tally.Fails(breakCheck[r.brk]) {
			t.Errorf("broken build %s: check %q did not fail: %v", r.brk, breakCheck[r.brk], r.tally.Failures())
		}
		*broken = append(*broken, r.tally)
	}
	return tally
}
