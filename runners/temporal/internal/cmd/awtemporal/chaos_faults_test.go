//go:build integration

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/harness"
)

// chaosCut: a worker cut off from the server by a TCP proxy (both ways)
// for four heartbeat timeouts, while it runs a function child (its gate
// opens during the cut), an agent child (guidance after the cut) and a
// retryable child (its first attempt runs until cancelled). Another
// worker of the same queue stays connected. The first two carry on
// (rejoined: attempt 1, run once); the retryable one completes by
// attempt 2 (on the other worker, or on the cut one when Temporal
// dispatched the retry to its pending poll), never by its cut-off first
// attempt's late end.
func chaosCut(t *testing.T, cl *cluster, dir string) *harness.Tally {
	t.Helper()
	tally := &harness.Tally{Runner: "temporal", Fault: "worker cut off", Forbidden: []string{"worker_lost"}}
	const queue = "agentwork-cut"
	px, err := harness.NewProxy(cl.hostPort)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	if _, err := cl.startWorker("worker-cut", "-queue", queue, "-hostport", px.Addr); err != nil {
		t.Fatal(err)
	}
	co, err := cl.startCoordinator("co-cut", "chaos-cut", "-queue", queue)
	if err != nil {
		t.Fatal(err)
	}
	gate := filepath.Join(dir, "cut-gate")
	retryDir := filepath.Join(dir, "cut-retry")
	if err := os.MkdirAll(retryDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for name, cmd := range map[string][2]string{"c1": {"gated", gate}, "c2": {"slow", "1 " + CanaryInput}, "c3": {"retry", retryDir}} {
		id, err := co.Start(cmd[0], cmd[1])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cl.waitStarted(id, "", 2*time.Minute); err != nil {
			t.Fatal(err)
		}
		ids[name] = id
	}
	if _, err := cl.startWorker("worker-cut-b", "-queue", queue); err != nil {
		t.Fatal(err)
	}
	time.Sleep(heartbeat) // heartbeats name the cut worker's rejoin queue (a duration of the contract)
	px.Cut()
	cut := time.Now()
	if err := os.WriteFile(gate, nil, 0o644); err != nil { // c1's child ends while cut off
		t.Fatal(err)
	}
	// The coordinator is not cut off: the model's calls answer as usual.
	var a harness.Answer
	err = co.Do(&a, "tool", "cut-list", `{"action":"list"}`)
	tally.Calls = append(tally.Calls, harness.ModelCall{What: "tool list", Answered: err == nil, Answer: a.Answer, GoErr: a.GoErr,
		Took: time.Duration(a.Ms) * time.Millisecond, Bound: 22 * time.Second})
	if d := 4*heartbeat - time.Since(cut); d > 0 {
		time.Sleep(d) // the cut's length is the fault itself
	}
	px.Resume()
	tally.Restarted = time.Now()
	tally.Notes = append(tally.Notes, fmt.Sprintf("cut %v (heartbeat timeout %v)", tally.Restarted.Sub(cut).Round(time.Second), heartbeat))
	if err := co.Do(nil, "send", ids["c2"], "cut-c2", "after the cut"); err != nil {
		tally.Problems = append(tally.Problems, "send to c2 after the cut: "+err.Error())
	}
	var notices harness.Notices
	for _, name := range []string{"c1", "c2", "c3"} {
		r, err := co.Settled(ids[name], 3*time.Minute)
		if err == nil && r.Status.State == "completed" && tally.FirstDone.IsZero() {
			tally.FirstDone = time.Now()
		}
		cl.mu.Lock()
		starts := cl.starts[ids[name]]
		cl.mu.Unlock()
		tally.Works = append(tally.Works, harness.Seen{ID: ids[name], Label: name, Found: err == nil, State: r.Status.State,
			Class: r.Class, Attempt: r.Status.Attempt, Starts: starts, Retryable: name == "c3", Notify: true})
		want := map[string]string{"c1": "gated on worker-cut ", "c2": "took guidance " + harness.Digest([]string{"after the cut"}) + " on worker-cut",
			// The retry may have been dispatched to the cut worker's
			// pending poll, and taken back from it after the cut.
			"c3": "second attempt on worker-cut"}[name]
		if !strings.HasPrefix(r.Result, want) || (name != "c3" && r.Status.Attempt != 1) {
			tally.Problems = append(tally.Problems, fmt.Sprintf("%s after the cut: %s %q attempt %d, want %q", name, r.Status.State, r.Result, r.Status.Attempt, want))
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		if err := co.Do(&notices, "notices"); (err == nil && len(notices.Settled) >= 3) || time.Now().After(deadline) {
			break
		}
	}
	for i := range tally.Works {
		tally.Works[i].Notices = notices.Settled[tally.Works[i].ID]
	}
	return tally
}

// chaosAdmission: a coordinator killed between a Work's admission and
// its workflow's start (it SIGKILLs itself as the start goes out), its
// owner limited to one outstanding Work: the next coordinator of the
// owner is refused until the registry, past the admission grace, finds
// no workflow and forgets the admission; then its Work runs.
func chaosAdmission(t *testing.T, cl *cluster, dir string) *harness.Tally {
	t.Helper()
	tally := &harness.Tally{Runner: "temporal", Fault: "coordinator killed before start"}
	const grace = 10 * time.Second
	flags := []string{"-admission-grace", grace.String(), "-max-outstanding", "1"}
	dying, err := cl.startCoordinator("co-dying", "chaos-admission", append(flags, "-die-before-start")...)
	if err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "admission-open")
	if err := os.WriteFile(open, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := dying.Start("gated", open); err == nil {
		t.Fatal("the dying coordinator answered its start")
	}
	killed := time.Now()
	tally.Restarted = killed
	co, err := cl.startCoordinator("co-admission", "chaos-admission", flags...)
	if err != nil {
		t.Fatal(err)
	}
	var id string
	refused := 0
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		var r struct{ Work string }
		err := co.Do(&r, "start", "gated", open)
		if err == nil {
			id = r.Work
			break
		}
		if !strings.Contains(err.Error(), "limit_exceeded") || time.Now().After(deadline) {
			t.Fatalf("start after the coordinator's death: %v", err)
		}
		refused++
	}
	tally.Notes = append(tally.Notes, fmt.Sprintf("the unstarted admission held the owner's only outstanding slot %v (grace %v; %d starts refused meanwhile), then was forgotten",
		time.Since(killed).Round(time.Second), grace, refused))
	r, err := co.Settled(id, 2*time.Minute)
	tally.FirstDone = time.Now()
	cl.mu.Lock()
	starts := cl.starts[id]
	cl.mu.Unlock()
	tally.Works = append(tally.Works, harness.Seen{ID: id, Label: "gated", Found: err == nil, State: r.Status.State, Class: r.Class,
		Attempt: r.Status.Attempt, Starts: starts, Notify: true})
	var list []json.RawMessage
	if err := co.Do(&list, "list"); err != nil || len(list) != 1 {
		tally.Problems = append(tally.Problems, fmt.Sprintf("the owner lists %d Works (%v), want the one that ran", len(list), err))
	}
	var n harness.Notices
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		if err := co.Do(&n, "notices"); (err == nil && n.Settled[id] > 0) || time.Now().After(deadline) {
			break
		}
	}
	tally.Works[0].Notices = n.Settled[id]
	return tally
}
