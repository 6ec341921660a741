//go:build integration

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/harness"
)

// chaosBound is each model-facing call's bound during an outage (the
// caller's context): above the runner's RPC timeout (30 s by default,
// which the chaos coordinators keep).
const chaosBound = 40 * time.Second

// chaosOutage is how long the server stays down: longer than the RPC
// timeout.
const chaosOutage = 40 * time.Second

// TestChaosRestate takes the Restate server away from a deployment (make
// chaos-durable; .ci/run runs its smoke form, AGENTWORK_CHAOS=smoke): the
// server SIGKILLed with Work in every state (harness.Scene), kept down
// longer than the RPC timeout while the model calls, and restarted on the
// same base directory, node name and ports. The table is printed and
// written to AGENTWORK_CHAOS_TABLE.
func TestChaosRestate(t *testing.T) {
	self, mode := os.Getenv("AWRESTATE_BIN"), os.Getenv("AGENTWORK_CHAOS")
	if self == "" || mode == "" {
		t.Skip("AWRESTATE_BIN and AGENTWORK_CHAOS are unset (make chaos-durable sets them)")
	}
	dir := os.Getenv("AWRESTATE_LOGS")
	if dir == "" {
		dir = t.TempDir()
	} else {
		dir = filepath.Join(dir, "chaos")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cl := newCluster(self, dir)
	cl.base = filepath.Join(dir, "restate-base")
	t.Cleanup(cl.stop)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(cl.start())
	t.Logf("Restate server: ingress %s, admin %s, base %s; logs in %s", cl.srv.Ingress, cl.srv.Admin, cl.base, dir)
	for _, w := range []string{"service-a", "service-b"} {
		_, err := cl.startWorker(w, "-max-running", "1")
		must(err)
	}
	tallies := []*harness.Tally{chaosRestateServer(t, cl, dir)}
	if mode != "smoke" {
		tallies = append(tallies, chaosRestateCut(t, cl, dir))
	}
	var table strings.Builder
	harness.WriteTable(&table, tallies)
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

// chaosRestateServer: the Restate server SIGKILLed with Work in every
// state, kept down past the RPC timeout while the model calls, restarted
// on the same base directory, node name and ports.
func chaosRestateServer(t *testing.T, cl *cluster, dir string) *harness.Tally {
	t.Helper()
	tally := &harness.Tally{Runner: "restate", Fault: "server restart", Forbidden: []string{"worker_lost"}}
	co, err := cl.startCoordinator("co-server", "chaos-server", "-rpc-timeout", "30s", "-model-bound", chaosBound.String())
	if err != nil {
		t.Fatal(err)
	}
	sc := &harness.Scene{Co: co, Dir: dir, Tally: tally, Settle: 3 * time.Minute,
		WaitStarted: func(id string, d time.Duration) error { _, err := cl.waitStarted(id, 1, d); return err },
		Starts:      func(id string) int { cl.mu.Lock(); defer cl.mu.Unlock(); return len(cl.started[id]) },
		Detached: func(id string) (string, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			for {
				rows, err := query(ctx, cl.srv.Admin, "SELECT status FROM sys_invocation WHERE target = 'agentwork.Work.gated/"+id+"/Run'")
				if err == nil && len(rows) == 1 && rows[0]["status"] == "completed" {
					return "completed", nil
				}
				select {
				case <-ctx.Done():
					return "", fmt.Errorf("the detached Work's run: %v %v", rows, err)
				case <-time.After(time.Second): // polling the server's invocation table
				}
			}
		},
	}
	if err := sc.Populate(CanaryInput); err != nil {
		t.Fatal(err)
	}
	t.Logf("server: populated; SIGKILL of the Restate server")
	cl.srv.Kill()
	down := time.Now()
	if err := sc.Outage(chaosBound); err != nil {
		t.Fatal(err)
	}
	if d := chaosOutage - time.Since(down); d > 0 {
		time.Sleep(d) // the outage's length is the fault itself
	}
	if err := cl.srv.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	tally.Notes = append(tally.Notes, fmt.Sprintf("server down %v (RPC timeout 30s)", restarted.Sub(down).Round(time.Second)))
	t.Logf("server: restarted after %v", restarted.Sub(down).Round(time.Second))
	if err := sc.Recover(restarted, CanaryOutput); err != nil {
		t.Fatal(err)
	}
	sc.Collect()
	sc.CheckTelemetry(CanaryInput, CanaryOutput, CanaryFailure, CanaryGuidance)
	return tally
}
