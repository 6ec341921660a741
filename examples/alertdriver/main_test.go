package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentwork/agentwork/telemetry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// start runs the driver in state on a free port and returns its base URL;
// the driver stops (and must return nil) when the test ends.
func start(t *testing.T, state string, speed float64) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() {
		done <- run(ctx, &out, config{addr: "127.0.0.1:0", state: state, clockSpeed: speed, environment: "test"}, ready)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	select {
	case addr := <-ready:
		http.DefaultClient.CloseIdleConnections()
		t.Cleanup(http.DefaultClient.CloseIdleConnections)
		return "http://" + addr
	case err := <-done:
		t.Fatalf("run returned before ready: %v\n%s", err, out.String())
	case <-time.After(30 * time.Second):
		t.Fatal("driver not ready after 30s")
	}
	return ""
}

func get(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", u, resp.Status, body)
	}
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("GET %s: %v: %s", u, err, body)
		}
	}
}

func release(t *testing.T, base string) {
	t.Helper()
	resp, err := http.Post(base+"/driver/release", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("release: %s", resp.Status)
	}
}

// liveStates returns the status page's live Work as "target=state", by id.
func liveStates(t *testing.T, base string) (telemetry.StatusPage, map[string]string) {
	t.Helper()
	var p telemetry.StatusPage
	get(t, base+"/statusz?format=json", &p)
	m := map[string]string{}
	for _, w := range p.Work {
		m[w.ID] = w.Target + "=" + w.State
	}
	return p, m
}

// waitFor polls cond every 20 ms for up to 10 s.
func waitFor(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		<-tick.C
	}
}

// TestHeldStates checks that each state puts exactly the Works it reports
// into the states it reports (as the status page shows them), with the
// slots and queue the alerts read, and that release empties it.
func TestHeldStates(t *testing.T) {
	const defaultRunning = 8 // work.WithMaxRunning's documented default
	for _, tc := range []struct {
		state        string
		want         []string // target=state of the held Works, in order
		slots, limit int
		queued       int
	}{
		{stateQueued, []string{"holder=running", "waiter=queued"}, 1, 1, 1},
		{stateCancelRequested, []string{"stuck=cancel-requested"}, 1, defaultRunning, 0},
		{stateSlotsFull, []string{"holder=running", "stuck=cancel-requested", "waiter=queued"}, 2, 2, 1},
		{stateApproval, []string{"gated=queued", "batch=running"}, 0, defaultRunning, 0}, // neither holds a slot nor queues
	} {
		t.Run(tc.state, func(t *testing.T) {
			base := start(t, tc.state, 60)
			var ds driverStatus
			get(t, base+"/driver", &ds)
			if !ds.Ready || ds.Released || ds.State != tc.state || len(ds.Work) != len(tc.want) {
				t.Fatalf("/driver: %+v", ds)
			}
			page, live := liveStates(t, base)
			for i, w := range ds.Work {
				if got := w.Target + "=" + w.State; got != tc.want[i] || live[w.ID] != got {
					t.Errorf("held %d: %s, status page %q, want %s", i, got, live[w.ID], tc.want[i])
				}
			}
			if page.Slots.InUse != tc.slots || page.Slots.Limit != tc.limit || page.Queue.Length != tc.queued || len(page.Work) != len(tc.want) {
				t.Errorf("status page: slots %+v queue %+v work %d, want slots %d/%d queued %d", page.Slots, page.Queue, len(page.Work), tc.slots, tc.limit, tc.queued)
			}
			release(t, base)
			waitFor(t, "live work to end after release", func() error {
				if p, live := liveStates(t, base); len(live) > 0 || p.Slots.InUse != 0 {
					return fmt.Errorf("still live: %v, slots %+v", live, p.Slots)
				}
				return nil
			})
			get(t, base+"/driver", &ds)
			if !ds.Released || len(ds.Work) != 0 {
				t.Errorf("/driver after release: %+v", ds)
			}
		})
	}
}

// TestFastClock checks that the clock speed reaches the status page's
// ages: at 600x, a Work queued a little while ago is minutes old.
func TestFastClock(t *testing.T) {
	base := start(t, stateQueued, 600)
	waitFor(t, "the queued age to pass 5 minutes", func() error {
		p, _ := liveStates(t, base)
		if p.Queue.OldestAgeSeconds <= 300 {
			return fmt.Errorf("oldest queued age %vs", p.Queue.OldestAgeSeconds)
		}
		return nil
	})
}

// TestApprovalPending checks that the gated Work awaits approval (marked
// on the status page, its request's age growing at the clock's speed in
// agentwork_work_oldest_approval_age_seconds) and that release approves
// it: it runs and completes.
func TestApprovalPending(t *testing.T) {
	base := start(t, stateApproval, 600)
	p, _ := liveStates(t, base)
	if len(p.Work) != 2 || !p.Work[0].AwaitingApproval || p.Waits.AwaitingApproval != 1 || p.Slots.InUse != 0 {
		t.Fatalf("status page: %+v", p)
	}
	waitFor(t, "the approval age to pass 30 minutes", func() error {
		if age := metricValue(t, base, "agentwork_work_oldest_approval_age_seconds", `target="gated"`); age <= 1800 {
			return fmt.Errorf("oldest approval age %vs", age)
		}
		return nil
	})
	if n := metricValue(t, base, "agentwork_work_awaiting_approval", `target="gated"`); n != 1 {
		t.Errorf("awaiting approval %v, want 1", n)
	}
	if n := metricValue(t, base, "agentwork_work_waiting", `target="batch"`); n != 1 {
		t.Errorf("jobs waiting %v, want 1", n)
	}
	if n := metricValue(t, base, "agentwork_job_polls_total", `target="batch"`, `outcome="waiting"`); n < 1 {
		t.Errorf("waiting polls %v, want some", n)
	}
	release(t, base)
	waitFor(t, "the approved Work and the job to complete", func() error {
		for _, target := range []string{"gated", "batch"} {
			if n := metricValue(t, base, "agentwork_work_transitions_total", `state="completed"`, `target="`+target+`"`); n != 1 {
				return fmt.Errorf("%s: %v completed", target, n)
			}
		}
		if n := metricValue(t, base, "agentwork_work_awaiting_approval", `target="gated"`); n != 0 {
			return fmt.Errorf("awaiting approval %v", n)
		}
		return nil
	})
}

// TestFailureRatio checks that flaky Work fails until release and
// completes after, as counted in agentwork_work_transitions_total, and
// that each reports an update accepted and one refused.
func TestFailureRatio(t *testing.T) {
	base := start(t, stateFailureRatio, 1)
	count := func(state string) float64 {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		for _, l := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(l, "agentwork_work_transitions_total{") && strings.Contains(l, `state="`+state+`"`) && strings.Contains(l, `target="flaky"`) {
				var v float64
				if _, err := fmt.Sscan(l[strings.LastIndex(l, " ")+1:], &v); err == nil {
					return v
				}
			}
		}
		return 0
	}
	waitFor(t, "failures", func() error {
		if n := count("failed"); n < 3 {
			return fmt.Errorf("%v failed", n)
		}
		if n := count("completed"); n != 0 {
			return fmt.Errorf("%v completed before release", n)
		}
		return nil
	})
	// Each flaky Work reports one update accepted and one refused.
	for _, outcome := range []string{"accepted", "count"} {
		if n := metricValue(t, base, "agentwork_work_updates_total", `target="flaky"`, `outcome="`+outcome+`"`); n < 3 {
			t.Errorf("%v updates %s, want at least 3", n, outcome)
		}
	}
	if n := metricValue(t, base, "agentwork_work_update_bytes_count", `target="flaky"`); n < 3 {
		t.Errorf("%v update sizes recorded, want at least 3", n)
	}
	release(t, base)
	waitFor(t, "completions after release", func() error {
		if n := count("completed"); n < 3 {
			return fmt.Errorf("%v completed", n)
		}
		return nil
	})
}

// metricValue returns the value of the series of family name whose line
// holds every one of labels (as `key="value"`), or 0.
func metricValue(t *testing.T, base, name string, labels ...string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
lines:
	for _, l := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(l, name+"{") && !strings.HasPrefix(l, name+" ") {
			continue
		}
		for _, lb := range labels {
			if !strings.Contains(l, lb) {
				continue lines
			}
		}
		var v float64
		if _, err := fmt.Sscan(l[strings.LastIndex(l, " ")+1:], &v); err == nil {
			return v
		}
	}
	return 0
}

// TestOrphaned checks that the orphaned state keeps abandoning Work of
// target orphan at shutdowns until release, that the abandoned children
// return after it, and that the spender fills the budget metrics.
func TestOrphaned(t *testing.T) {
	base := start(t, stateOrphaned, 1)
	orphans := func() float64 { return metricValue(t, base, "agentwork_work_orphaned_total", `target="orphan"`) }
	waitFor(t, "orphans and spending", func() error {
		if n := orphans(); n < 2 {
			return fmt.Errorf("%v orphaned", n)
		}
		for _, m := range []struct {
			name   string
			labels []string
		}{
			{"agentwork_work_budget_exhausted_total", []string{`budget="turns"`, `target="spender"`}},
			{"agentwork_work_tokens_total", []string{`target="spender"`, `type="input"`}},
			{"agentwork_work_tokens_total", []string{`target="spender"`, `type="output"`}},
			{"agentwork_work_turns_total", []string{`target="spender"`}},
			{"agentwork_work_tool_calls_total", []string{`target="spender"`}},
			{"agentwork_budget_pool_remaining", []string{`budget="tokens"`}},
		} {
			if v := metricValue(t, base, m.name, m.labels...); v <= 0 {
				return fmt.Errorf("%s%v = %v", m.name, m.labels, v)
			}
		}
		return nil
	})
	if v := metricValue(t, base, "agentwork_work_transitions_total", `state="completed"`, `target="orphan"`); v != 0 {
		t.Errorf("%v orphans completed before release", v)
	}
	release(t, base)
	waitFor(t, "every abandoned child to return after release", func() error {
		n, done := orphans(), metricValue(t, base, "agentwork_work_transitions_total", `state="completed"`, `target="orphan"`)
		if done < n {
			return fmt.Errorf("%v of %v orphans returned", done, n)
		}
		return nil
	})
	var ds driverStatus
	get(t, base+"/driver", &ds)
	if !ds.Ready || !ds.Released || ds.State != stateOrphaned {
		t.Errorf("/driver: %+v", ds)
	}
}

func TestBadFlags(t *testing.T) {
	for _, cfg := range []config{{state: "nope", clockSpeed: 1}, {state: stateQueued, clockSpeed: 0.5}} {
		if err := run(context.Background(), io.Discard, cfg, nil); err == nil {
			t.Errorf("run(%+v) = nil, want an error", cfg)
		}
	}
}
