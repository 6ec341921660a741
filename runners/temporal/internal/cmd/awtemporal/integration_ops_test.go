//go:build integration

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/agentwork/agentwork/runners/harness"
	"github.com/agentwork/agentwork/runners/temporal"
)

// opsJob is the Prometheus job that scrapes the deployment's processes:
// one job per deployment, so that a worker's per-target limit meets its
// target's queue, which the coordinator exports.
const opsJob = "agentwork-temporal"

// promqlBlock is a fenced promql block of a runbook.
var promqlBlock = regexp.MustCompile("(?s)```promql\n(.*?)```")

// opsAlertKey is one alert series: alert, instance ("" for an alert
// aggregated over instances) and target.
type opsAlertKey struct{ alert, instance, target string }

// TestIntegrationTemporalOps drives the dashboards' alerts on a Temporal
// deployment: a real Prometheus (PROMETHEUS_BIN) scrapes two worker
// processes (one slot per target each) and a coordinator exporting the
// deployment's gauges, on the shipped rules compressed as make
// integration compresses them (AGENTWORK_COMPRESSED_RULES: durations
// divided by the factor; the processes' gauge clocks run that many times
// faster, the thresholds unchanged). Queued work behind two busy workers
// (AgentworkQueuedWorkWaiting, AgentworkAtConcurrencyLimit on each
// worker), a child ignoring its cancel (AgentworkWorkStuckCancelRequested)
// and Work of a target no worker polls (AgentworkTargetHasNoWorker, and its
// queue waiting) fire, then resolve when released; meanwhile the scraped
// Work by state equals Temporal's visibility count, the status pages list
// Work of both worker processes, and no canary reaches a series or a page.
// Last, a Work awaiting approval: the scraped awaiting-approval gauge
// equals the coordinator's pending requests, then 0 once approved.
func TestIntegrationTemporalOps(t *testing.T) {
	temporalBin, self, promBin := os.Getenv("TEMPORAL_BIN"), os.Getenv("AWTEMPORAL_BIN"), os.Getenv("PROMETHEUS_BIN")
	rules := os.Getenv("AGENTWORK_COMPRESSED_RULES")
	if temporalBin == "" || self == "" || promBin == "" || rules == "" {
		t.Skip("TEMPORAL_BIN, AWTEMPORAL_BIN, PROMETHEUS_BIN and AGENTWORK_COMPRESSED_RULES are unset (make integration-temporal sets them)")
	}
	factorText, err := os.ReadFile(rules + ".factor")
	if err != nil {
		t.Fatal(err)
	}
	factor := strings.TrimSpace(string(factorText))
	dir := os.Getenv("AWTEMPORAL_LOGS")
	if dir == "" {
		dir = t.TempDir()
	} else {
		dir = filepath.Join(dir, "ops")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cl := newCluster(self, dir)
	t.Cleanup(cl.stop)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := cl.startServer(); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	addr := func() string {
		t.Helper()
		p, err := harness.FreePort()
		must(err)
		return "127.0.0.1:" + strconv.Itoa(p)
	}
	metrics := map[string]string{"worker-a": addr(), "worker-b": addr(), "coordinator": addr()}
	for _, w := range []string{"worker-a", "worker-b"} {
		_, err := cl.startWorker(w, "-max-running", "1", "-metrics", metrics[w], "-clock-speed", factor)
		must(err)
	}
	co, err := cl.startCoordinator("coordinator", "ops", "-deployment", "-snapshot-interval", "1s",
		"-metrics", metrics["coordinator"], "-clock-speed", factor)
	must(err)
	instance := map[string]string{} // scrape address -> process name
	var scrape []string
	for name, a := range metrics {
		instance[a] = name
		scrape = append(scrape, a)
	}
	sort.Strings(scrape)

	// Prometheus: every second, the compressed rules.
	promAddr := addr()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - %q\nscrape_configs:\n  - job_name: %s\n    static_configs:\n      - targets: [%s]\n",
		rules, opsJob, `"`+strings.Join(scrape, `", "`)+`"`)
	pcfg := filepath.Join(dir, "prometheus.yml")
	must(os.WriteFile(pcfg, []byte(cfg), 0o644))
	prom, promURL := startPrometheus(t, cl, promBin, pcfg, filepath.Join(dir, "tsdb"), promAddr, addr)
	waitUntil(t, "three targets scraped", time.Minute, prom, func() error {
		res, err := promQuery(promURL, `count(up{job="`+opsJob+`"} == 1)`)
		if err != nil || len(res) != 1 || res[0].value != 3 {
			return fmt.Errorf("up: %v %v", res, err)
		}
		return nil
	})

	// The held states. gated: two run (one per worker, each worker's one
	// slot for the target), the third waits in the target's queue.
	gate := filepath.Join(dir, "gate-"+CanaryInput)
	stubbornGate := filepath.Join(dir, "stubborn-"+CanaryInput)
	for _, f := range []string{gate, stubbornGate} { // a previous run's, in AWTEMPORAL_LOGS
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	var gated []string
	byWorker := map[string]string{} // worker -> the gated Work it runs
	for i := range 3 {
		id, err := co.Start("gated", gate)
		must(err)
		gated = append(gated, id)
		if i < 2 {
			w, err := cl.waitStarted(id, "", 2*time.Minute)
			must(err)
			byWorker[w] = id
		}
	}
	if len(byWorker) != 2 {
		t.Fatalf("the running gated Works ran on %v, want one on each worker", byWorker)
	}
	// stubborn: cancel-requested, its child ignores the cancel.
	stubborn, err := co.Start("stubborn", stubbornGate)
	must(err)
	stubbornWorker, err := cl.waitStarted(stubborn, "", 2*time.Minute)
	must(err)
	var cr struct {
		Accepted bool   `json:"accepted"`
		State    string `json:"state"`
	}
	must(co.Do(&cr, "cancel", stubborn))
	if !cr.Accepted || cr.State != "cancel-requested" {
		t.Fatalf("cancel: %+v", cr)
	}
	// ghost: no worker registers it.
	ghost, err := co.Start("ghost", CanaryInput)
	must(err)
	t.Logf("held: gated %v (running on %v), stubborn %s cancel-requested on %s, ghost %s", short(gated), byWorker, stubborn[:8], stubbornWorker, ghost[:8])

	want := []opsAlertKey{
		{"AgentworkQueuedWorkWaiting", metrics["coordinator"], "gated"},
		{"AgentworkQueuedWorkWaiting", metrics["coordinator"], "ghost"},
		{"AgentworkAtConcurrencyLimit", metrics["worker-a"], "gated"},
		{"AgentworkAtConcurrencyLimit", metrics["worker-b"], "gated"},
		{"AgentworkWorkStuckCancelRequested", metrics[stubbornWorker], "stubborn"},
		{"AgentworkTargetHasNoWorker", "", "ghost"},
	}
	start := time.Now()
	waitUntil(t, "the alerts to fire", 3*time.Minute, prom, func() error {
		got, err := opsAlerts(promURL)
		if err != nil {
			return err
		}
		var missing []string
		for _, k := range want {
			if got[k] != "firing" {
				missing = append(missing, fmt.Sprintf("%v (%s)", k, got[k]))
			}
		}
		for k, st := range got {
			if !containsKey(want, k) {
				return fmt.Errorf("unexpected alert %v %s", k, st)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("not firing: %v", missing)
		}
		return nil
	})
	t.Logf("fired after %v: %v", time.Since(start).Round(time.Second), want)

	// The runbooks of the alert only Temporal fires, and the slots, limit
	// and queue queries of the per-target limit's (the first three; its
	// duration quantile needs finished Work), run as written while they
	// fire: each returns data.
	for alert, n := range map[string]int{"AgentworkTargetHasNoWorker": 0, "AgentworkAtConcurrencyLimit": 3} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "..", "dashboards", "runbooks", alert+".md"))
		must(err)
		qs := promqlBlock.FindAllSubmatch(b, -1)
		if len(qs) < n || len(qs) == 0 {
			t.Fatalf("runbook %s has %d promql blocks", alert, len(qs))
		}
		if n > 0 {
			qs = qs[:n]
		}
		for i, m := range qs {
			q := strings.TrimSpace(string(m[1]))
			res, err := promQuery(promURL, q)
			if err != nil || len(res) == 0 {
				t.Errorf("runbook %s query %d returns nothing while it fires (%v):\n%s", alert, i+1, err, q)
			}
		}
	}

	// Work by state agrees with Temporal's visibility: the open Work
	// workflows of the deployment's queue, counted by the server, against
	// the coordinator's scraped agentwork_work_items (a stable state:
	// equal within a scrape interval).
	tc, err := client.Dial(client.Options{HostPort: cl.hostPort, Namespace: namespace, DataConverter: dataConverter(), Logger: slogAdapter{nopLogger()}})
	must(err)
	defer tc.Close()
	waitUntil(t, "the scraped Work by state to equal the visibility count", 30*time.Second, prom, func() error {
		cnt, err := tc.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: namespace,
			Query: fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running' AND TaskQueue = '%s'", temporal.WorkWorkflowName, cl.queue)})
		if err != nil {
			return err
		}
		res, err := promQuery(promURL, `sum(agentwork_work_items{job="`+opsJob+`", state=~"queued|running|cancel-requested"})`)
		if err != nil || len(res) != 1 {
			return fmt.Errorf("items: %v %v", res, err)
		}
		if int64(res[0].value) != cnt.GetCount() || cnt.GetCount() != 5 {
			return fmt.Errorf("scraped %v live Work, visibility counts %d (want 5 each)", res[0].value, cnt.GetCount())
		}
		return nil
	})
	// Summed over the processes as a dashboard does (a worker reports its
	// targets at 0: the deployment's counts are the coordinator's).
	queued, _ := promQuery(promURL, `sum(agentwork_work_items{job="`+opsJob+`", target="gated", state="queued"})`)
	running, _ := promQuery(promURL, `sum(agentwork_work_items{job="`+opsJob+`", target="gated", state="running"})`)
	if len(queued) != 1 || queued[0].value != 1 || len(running) != 1 || running[0].value != 2 {
		t.Errorf("gated by state: queued %v running %v, want 1 and 2", queued, running)
	}
	slots, _ := promQuery(promURL, `sum(agentwork_work_slots_in_use{job="`+opsJob+`", target="gated"})`)
	if len(slots) != 1 || slots[0].value != 2 {
		t.Errorf("gated slots in use over the workers: %v, want 2", slots)
	}

	// The status pages: the coordinator's deployment view lists the Work
	// running on both workers; each worker's lists its own.
	type page struct {
		Work []struct {
			ID, State string
		} `json:"work"`
		Targets []struct {
			Target  string `json:"target"`
			Pollers *int   `json:"pollers"`
		} `json:"targets"`
	}
	statusOf := func(name string) page {
		t.Helper()
		b, err := get("http://" + metrics[name] + "/statusz?format=json")
		must(err)
		var p page
		must(json.Unmarshal(b, &p))
		return p
	}
	listed := func(p page, id string) bool {
		for _, w := range p.Work {
			if w.ID == id {
				return true
			}
		}
		return false
	}
	cp := statusOf("coordinator")
	for w, id := range byWorker {
		if !listed(cp, id) {
			t.Errorf("the coordinator's status page does not list %s (running on %s): %+v", id, w, cp.Work)
		}
		if !listed(statusOf(w), id) {
			t.Errorf("%s's status page does not list its Work %s", w, id)
		}
	}
	for _, tg := range cp.Targets {
		if tg.Target == "ghost" && (tg.Pollers == nil || *tg.Pollers != 0) {
			t.Errorf("ghost's pollers on the status page: %v, want 0", tg.Pollers)
		}
	}

	// The canary: scraped series (Prometheus's and each /metrics), the
	// status pages (JSON and HTML).
	canaries := []string{CanaryInput, CanaryOutput, CanaryFailure, CanaryGuidance}
	var pages []string
	series, err := get(promURL + "/api/v1/query?query=" + url.QueryEscape(`{__name__=~"agentwork_.+"}`))
	must(err)
	pages = append(pages, string(series))
	for name, a := range metrics {
		for _, p := range []string{"/metrics", "/statusz", "/statusz?format=json"} {
			b, err := get("http://" + a + p)
			must(err)
			if p == "/metrics" && !strings.Contains(string(b), "agentwork_work_items") {
				t.Errorf("%s%s has no agentwork_work_items: the canary check would see nothing", name, p)
			}
			pages = append(pages, string(b))
		}
	}
	for _, p := range pages {
		for _, c := range canaries {
			if strings.Contains(p, c) {
				t.Errorf("a scraped series or status page holds %s", c)
			}
		}
	}

	// Release: the gate opens (the gated Works complete, the queue drains),
	// the stubborn child returns, the ghost Work is cancelled (queued).
	must(os.WriteFile(gate, nil, 0o644))
	must(os.WriteFile(stubbornGate, nil, 0o644))
	must(co.Do(&cr, "cancel", ghost))
	for _, id := range append(gated, stubborn, ghost) {
		r, err := co.Settled(id, 2*time.Minute)
		must(err)
		if !harness.IsTerminal(r.Status.State) {
			t.Fatalf("Work %s did not end: %+v", id, r.Status)
		}
	}
	start = time.Now()
	waitUntil(t, "every alert to resolve", 3*time.Minute, prom, func() error {
		got, err := opsAlerts(promURL)
		if err != nil {
			return err
		}
		if len(got) > 0 {
			return fmt.Errorf("still active: %v", got)
		}
		return nil
	})
	t.Logf("resolved %v after the release", time.Since(start).Round(time.Second))

	// Work awaiting approval: the coordinator's scraped
	// agentwork_work_awaiting_approval equals its pending requests; it is
	// queued by state but not in the target's queue (no queued age).
	var hr struct{ Work string }
	must(co.Do(&hr, "held", "gated", gate))
	var pending []struct {
		Work struct {
			ID string `json:"id"`
		}
	}
	must(co.Do(&pending, "pending"))
	if len(pending) != 1 || pending[0].Work.ID != hr.Work {
		t.Fatalf("pending %+v, want %s", pending, hr.Work)
	}
	one := func(expr string) (float64, error) {
		res, err := promQuery(promURL, expr)
		if err != nil || len(res) != 1 {
			return 0, fmt.Errorf("%s: %v %v", expr, res, err)
		}
		return res[0].value, nil
	}
	waitUntil(t, "the scraped approvals to equal the pending requests", 30*time.Second, prom, func() error {
		awaiting, err := one(`sum(agentwork_work_awaiting_approval{job="` + opsJob + `"})`)
		if err != nil {
			return err
		}
		queued, err := one(`sum(agentwork_work_items{job="` + opsJob + `", target="gated", state="queued"})`)
		if err != nil {
			return err
		}
		age, err := one(`max(agentwork_work_oldest_approval_age_seconds{job="` + opsJob + `", target="gated"})`)
		if err != nil {
			return err
		}
		queuedAge, err := one(`max(agentwork_work_oldest_queued_age_seconds{job="` + opsJob + `", target="gated"})`)
		if err != nil {
			return err
		}
		if int(awaiting) != len(pending) || queued != 1 || age <= 0 || queuedAge != 0 {
			return fmt.Errorf("scraped awaiting %v (pending %d), gated queued %v, oldest approval %vs, oldest queued %vs",
				awaiting, len(pending), queued, age, queuedAge)
		}
		return nil
	})
	must(co.Do(nil, "approve", hr.Work))
	r, err := co.Settled(hr.Work, 2*time.Minute)
	must(err)
	if r.Status.State != "completed" {
		t.Fatalf("the approved Work: %+v", r.Status)
	}
	waitUntil(t, "no approval scraped after the approval", 30*time.Second, prom, func() error {
		awaiting, err := one(`sum(agentwork_work_awaiting_approval{job="` + opsJob + `"})`)
		if err != nil || awaiting != 0 {
			return fmt.Errorf("scraped awaiting %v, %v; want 0", awaiting, err)
		}
		return nil
	})
	t.Logf("awaiting approval scraped as pending: %d, then 0 once approved", len(pending))
}

func short(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id[:8]
	}
	return out
}

func containsKey(ks []opsAlertKey, k opsAlertKey) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// waitUntil polls check every 250 ms until it succeeds, failing the test
// after timeout or when p exits (a real external system: polling with a
// deadline).
// startPrometheus starts Prometheus on promAddr and waits until it is
// ready. The port comes from a free-port pick that another process may
// take before Prometheus binds it: readiness counts only when the answer
// names this config file (another process answering there does not), and
// a Prometheus that exited before it was ready (address in use) is started
// again on a fresh port from next, three times at most.
func startPrometheus(t *testing.T, cl *cluster, bin, cfg, tsdb, promAddr string, next func() string) (*proc, string) {
	t.Helper()
	for try := 1; ; try++ {
		prom, err := cl.Spawn("prometheus", nil, bin, "--config.file="+cfg, "--web.listen-address="+promAddr,
			"--storage.tsdb.path="+tsdb)
		if err != nil {
			t.Fatalf("prometheus: %v", err)
		}
		promURL := "http://" + promAddr
		ours := func() error {
			body, err := get(promURL + "/api/v1/status/flags")
			if err != nil {
				return err
			}
			if !strings.Contains(string(body), strconv.Quote(cfg)) {
				return fmt.Errorf("another process answers at %s", promAddr)
			}
			_, err = get(promURL + "/-/ready")
			return err
		}
		deadline := time.Now().Add(time.Minute)
		for {
			err := ours()
			if err == nil {
				return prom, promURL
			}
			select {
			case <-prom.Done:
				if try == 3 {
					t.Fatalf("Prometheus ready: exited %d times (last: %v)", try, err)
				}
				t.Logf("Prometheus exited before it was ready on %s (%v): again on a fresh port", promAddr, err)
				promAddr = next()
			default:
				if time.Now().After(deadline) {
					t.Fatalf("Prometheus ready: not within a minute: %v", err)
				}
				time.Sleep(250 * time.Millisecond)
				continue
			}
			break
		}
	}
}

func waitUntil(t *testing.T, what string, timeout time.Duration, p *proc, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		select {
		case <-p.Done:
			t.Fatalf("%s: %s exited", what, p.Name)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", what, timeout, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func get(u string) ([]byte, error) {
	resp, err := http.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", u, resp.Status)
	}
	return b, err
}

type promSample struct {
	metric map[string]string
	value  float64
}

func promQuery(base, expr string) ([]promSample, error) {
	b, err := get(base + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return nil, err
	}
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s: %s", expr, r.Error)
	}
	var out []promSample
	for _, x := range r.Data.Result {
		s, _ := x.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, err
		}
		out = append(out, promSample{metric: x.Metric, value: v})
	}
	return out, nil
}

// opsAlerts returns the pending and firing alerts of the ops job.
func opsAlerts(base string) (map[opsAlertKey]string, error) {
	b, err := get(base + "/api/v1/alerts")
	if err != nil {
		return nil, err
	}
	var r struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	out := map[opsAlertKey]string{}
	for _, a := range r.Data.Alerts {
		if a.Labels["job"] != opsJob {
			continue
		}
		out[opsAlertKey{a.Labels["alertname"], a.Labels["instance"], a.Labels["target"]}] = a.State
	}
	return out, nil
}
