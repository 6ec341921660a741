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

// chaosRestateCut: a deployment cut off from the server. A service
// process registers itself at a TCP proxy's address (new invocations of
// its services go there) and runs an agent child and a function child;
// the proxy then stops forwarding, both ways, until the server notices
// the dead connection (measured: the Work's invocation leaves "running"
// in sys_invocation; at most five minutes), and a little longer; then it
// forwards again. The server's retry reaches the process that still holds
// each attempt, which takes it back: both complete, attempt 1, run once.
func chaosRestateCut(t *testing.T, cl *cluster, dir string) *harness.Tally {
	t.Helper()
	tally := &harness.Tally{Runner: "restate", Fault: "deployment cut off", Forbidden: []string{"worker_lost"}}
	addr, err := harness.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	px, err := harness.NewProxy(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	if _, err := cl.startService("service-cut", "-listen", addr, "-advertise", "http://"+px.Addr); err != nil {
		t.Fatal(err)
	}
	co, err := cl.startCoordinator("co-cut", "chaos-cut", "-rpc-timeout", "30s")
	if err != nil {
		t.Fatal(err)
	}
	gate := filepath.Join(dir, "cut-gate")
	ids := map[string]string{}
	for name, cmd := range map[string][2]string{"c1": {"gated", gate}, "c2": {"slow", "1 " + CanaryInput}} {
		id, err := co.Start(cmd[0], cmd[1])
		if err != nil {
			t.Fatal(err)
		}
		if w, err := cl.waitStarted(id, 1, 2*time.Minute); err != nil || w != "service-cut" {
			t.Fatalf("%s started on %q (%v), want service-cut", name, w, err)
		}
		ids[name] = id
	}
	px.Cut()
	cut := time.Now()
	if err := os.WriteFile(gate, nil, 0o644); err != nil { // c1's child ends while cut off
		t.Fatal(err)
	}
	// How long the server takes to notice: the invocation of c2's run
	// leaves "running" (it is retried, backing off).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	noticed := time.Duration(0)
	for ctx.Err() == nil {
		rows, err := query(ctx, cl.srv.Admin, "SELECT status FROM sys_invocation WHERE target = 'agentwork.Work.slow/"+ids["c2"]+"/Run'")
		if err == nil && len(rows) == 1 && rows[0]["status"] != "running" {
			noticed = time.Since(cut)
			break
		}
		time.Sleep(500 * time.Millisecond) // polling the server's invocation table
	}
	if noticed == 0 {
		tally.Notes = append(tally.Notes, "the server had not noticed the dead connection after 5 min")
	} else {
		tally.Notes = append(tally.Notes, fmt.Sprintf("the server noticed the dead connection to the deployment after %v", noticed.Round(time.Second)))
		time.Sleep(5 * time.Second) // cut a little longer than that (the fault itself)
	}
	px.Resume()
	tally.Restarted = time.Now()
	tally.Notes = append(tally.Notes, fmt.Sprintf("cut %v", tally.Restarted.Sub(cut).Round(time.Second)))
	if err := co.Do(nil, "send", ids["c2"], "cut-c2", "after the cut"); err != nil {
		tally.Problems = append(tally.Problems, "send to c2 after the cut: "+err.Error())
	}
	for _, name := range []string{"c1", "c2"} {
		r, err := co.Settled(ids[name], 3*time.Minute)
		if err == nil && r.Status.State == "completed" && tally.FirstDone.IsZero() {
			tally.FirstDone = time.Now()
		}
		cl.mu.Lock()
		starts := len(cl.started[ids[name]])
		cl.mu.Unlock()
		tally.Works = append(tally.Works, harness.Seen{ID: ids[name], Label: name, Found: err == nil, State: r.Status.State,
			Class: r.Class, Attempt: r.Status.Attempt, Starts: starts, Notify: true})
		want := map[string]string{"c1": "gated on service-cut ", "c2": "took guidance " + harness.Digest([]string{"after the cut"}) + " on service-cut"}[name]
		if !strings.HasPrefix(r.Result, want) || r.Status.Attempt != 1 {
			tally.Problems = append(tally.Problems, fmt.Sprintf("%s after the cut: %s %q attempt %d, want %q", name, r.Status.State, r.Result, r.Status.Attempt, want))
		}
	}
	var n harness.Notices
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		if err := co.Do(&n, "notices"); (err == nil && len(n.Settled) >= 2) || time.Now().After(deadline) {
			break
		}
	}
	for i := range tally.Works {
		tally.Works[i].Notices = n.Settled[tally.Works[i].ID]
	}
	return tally
}
