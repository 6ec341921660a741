//go:build integration

package dashboards

// Each alert driven to fire and resolve against the real Prometheus of
// TestIntegration. One examples/alertdriver process (DRIVER_BIN) per state
// holds a real work.Engine in it; Prometheus scrapes them as job
// agentwork-driver and evaluates the shipped rules with time compressed
// compressFactor-fold (compressRules: `for` and range windows divided, the
// expressions otherwise the shipped ones), while the drivers' clocks run
// compressFactor times faster, so the age thresholds (5 and 10 minutes)
// are reached in seconds with the thresholds unchanged.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
)

// driverJob is the scrape job of the alert drivers.
const driverJob = "agentwork-driver"

// alertTimeout bounds the wait for the alerts to fire, and for each to
// resolve after its release.
const alertTimeout = 90 * time.Second

// alertKey names one alert series: the alert and its target label ("*"
// for AgentworkAtConcurrencyLimit on an in-process engine's shared limit).
type alertKey struct{ alert, target string }

func (k alertKey) String() string {
	if k.target == "" {
		return k.alert
	}
	return k.alert + "{target=" + k.target + "}"
}

// driverSpec is one state a driver holds, and the alerts it must fire: all
// of them and no other.
type driverSpec struct {
	state      string
	clockSpeed int
	fires      []alertKey
	why        string
}

// temporalOnly are the alerts only a durable deployment's gauges can
// fire (runners/temporal's integration and chaos tests drive them).
var temporalOnly = map[string]bool{"AgentworkTargetHasNoWorker": true, "AgentworkEngineUnavailable": true}

// driverSpecs are the states, in the order they are released.
var driverSpecs = []driverSpec{
	{"failure-ratio", 1, []alertKey{{"AgentworkWorkFailureRatioHigh", "flaky"}},
		"every Work of target flaky fails, 10 a second, on a non-demo environment; released: they complete"},
	{"cancel-requested", compressFactor, []alertKey{{"AgentworkWorkStuckCancelRequested", "stuck"}},
		"one Work of target stuck is cancel-requested and its child ignores the cancel; released: it returns and ends cancelled"},
	{"queued", compressFactor, []alertKey{{"AgentworkQueuedWorkWaiting", "waiter"}, {"AgentworkAtConcurrencyLimit", "*"}},
		"limit 1: holder runs, a Work of target waiter waits queued behind it (a queue only waits behind full slots, so the limit alert fires too); released: holder completes, waiter runs and completes"},
	{"slots-full", 1, []alertKey{{"AgentworkAtConcurrencyLimit", "*"}},
		"limit 2: holder running and stuck cancel-requested hold both slots, waiter queued, at real clock speed (no age threshold reached); released: all three end"},
	{"orphaned", 1, []alertKey{{"AgentworkWorkOrphaned", "orphan"}},
		"every 500 ms an engine is shut down (grace 0) while its Work of target orphan ignores cancellation, and Shutdown abandons it; a spender child fills the budget metrics; released: no more shutdowns, the abandoned children return"},
	{"approval-pending", compressFactor, []alertKey{{"AgentworkApprovalPending", "gated"}},
		"a Work of target gated needs approval and gets no answer (queued, outside the dispatch queue, no slot: neither queue alert fires), and a job of target batch waits between polls (no slot); released: the approver approves it and the job answers done, both complete"},
}

// driver is one running alert driver.
type driver struct {
	spec driverSpec
	proc *proc
	addr string
	base string
	held []heldWork // what it reports holding
}

// heldWork is a live Work a driver holds (examples/alertdriver's /driver).
type heldWork struct {
	ID     string `json:"id"`
	Target string `json:"target"`
	State  string `json:"state"`
}

type driverStatus struct {
	State    string     `json:"state"`
	Ready    bool       `json:"ready"`
	Released bool       `json:"released"`
	Work     []heldWork `json:"work"`
}

// startDrivers starts one driver per spec on free addresses.
func startDrivers(t *testing.T, dir, bin string) []*driver {
	t.Helper()
	addrs := freeAddrs(t, len(driverSpecs))
	var out []*driver
	for i, s := range driverSpecs {
		d := &driver{spec: s, addr: addrs[i], base: "http://" + addrs[i]}
		d.proc = startProc(t, dir, "driver-"+s.state, bin, []string{
			"-addr", d.addr, "-state", s.state, "-clock-speed", fmt.Sprint(s.clockSpeed), "-environment", "integration-test",
		}, os.Environ())
		out = append(out, d)
	}
	for _, d := range out {
		waitFor(t, "driver "+d.spec.state+" ready at "+d.base+"/driver", startTimeout, []*proc{d.proc}, func() error {
			st, err := d.status()
			if err != nil {
				return err
			}
			if !st.Ready {
				return fmt.Errorf("not ready: %+v", st)
			}
			d.held = st.Work
			return nil
		})
	}
	return out
}

func (d *driver) status() (driverStatus, error) {
	var st driverStatus
	body, err := httpGet(d.base + "/driver")
	if err != nil {
		return st, err
	}
	err = json.Unmarshal(body, &st)
	return st, err
}

func (d *driver) release() error {
	resp, err := httpClient.Post(d.base+"/driver/release", "application/json", nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s/driver/release: %s", d.base, resp.Status)
	}
	return nil
}

// promAlert is one alert of /api/v1/alerts.
type promAlert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"`
}

// promAlerts returns the pending and firing alerts by instance.
func promAlerts(base string) (map[string]map[alertKey]string, error) {
	body, err := httpGet(base + "/api/v1/alerts")
	if err != nil {
		return nil, err
	}
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Alerts []promAlert `json:"alerts"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		return nil, fmt.Errorf("/api/v1/alerts: %v: %.300s", err, body)
	}
	out := map[string]map[alertKey]string{}
	for _, a := range r.Data.Alerts {
		if a.State != "pending" && a.State != "firing" {
			continue
		}
		inst := a.Labels["instance"]
		if out[inst] == nil {
			out[inst] = map[alertKey]string{}
		}
		out[inst][alertKey{a.Labels["alertname"], a.Labels["target"]}] = a.State
	}
	return out, nil
}

// failureAlert is the critical alert the demo environment must not fire.
const failureAlert = "AgentworkWorkFailureRatioHigh"

// demoWouldFail reports whether the failure alert's expression without its
// demo-environment exclusion (the left side of its `unless`) holds for the
// demo's instance: then only the exclusion keeps the demo from paging.
func demoWouldFail(t *testing.T, promURL, rules, demoAddr string) bool {
	t.Helper()
	var f ruleFile
	readYAML(t, rules, &f)
	expr := ""
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert == failureAlert {
				expr = r.Expr
			}
		}
	}
	ast, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		t.Fatalf("%s: %v", failureAlert, err)
	}
	be, ok := ast.(*parser.BinaryExpr)
	if !ok || be.Op != parser.LUNLESS {
		t.Fatalf("%s: expression is not `... unless ...` (the demo exclusion): %s", failureAlert, expr)
	}
	res, err := promInstant(promURL, be.LHS.String())
	if err != nil {
		t.Fatalf("%s without the exclusion: %v", failureAlert, err)
	}
	for _, s := range res {
		if s.metric["instance"] == demoAddr {
			return true
		}
	}
	return false
}

// alertsFireAndResolve drives every alert through its driver: all fire,
// then each driver is released in turn and its alerts must resolve while
// the others still fire. All along, the demo (deployment environment demo)
// must not fire the failure alert, although without the exclusion it
// would. It returns when every alert has resolved; before the releases it
// calls whileFiring.
func alertsFireAndResolve(t *testing.T, promURL, rules, demoAddr string, drivers []*driver, watch []*proc, whileFiring func()) {
	t.Helper()
	start := time.Now()
	byInst := map[string]*driver{}
	for _, d := range drivers {
		byInst[d.addr] = d
		t.Logf("driver %s (%s, clock x%d): %s; must fire %v", d.spec.state, d.addr, d.spec.clockSpeed, d.spec.why, d.spec.fires)
	}
	released := map[*driver]bool{}
	demoSeen := false
	// check validates one view of the alerts: nothing unexpected anywhere,
	// nothing on a released driver, and the demo quiet.
	check := func(got map[string]map[alertKey]string) {
		t.Helper()
		for inst, as := range got {
			for k, st := range as {
				d := byInst[inst]
				switch {
				case inst == demoAddr && k.alert == failureAlert:
					t.Fatalf("the demo (deployment environment demo) has %s %s: the critical failure alert must exclude it", k, st)
				case d == nil:
					continue // the demo's other alerts are not driven here
				case released[d]:
					t.Fatalf("driver %s: %s is %s again after its release", d.spec.state, k, st)
				case !containsKey(d.spec.fires, k):
					t.Fatalf("driver %s: %s is %s, but its state must fire only %v", d.spec.state, k, st, d.spec.fires)
				}
			}
		}
	}
	firing := func(got map[string]map[alertKey]string, d *driver) error {
		for _, k := range d.spec.fires {
			if st := got[d.addr][k]; st != "firing" {
				return fmt.Errorf("driver %s: %s is %q", d.spec.state, k, st)
			}
		}
		return nil
	}

	firedAt := map[*driver]time.Duration{}
	waitFor(t, "every driven alert to fire", alertTimeout, watch, func() error {
		got, err := promAlerts(promURL)
		if err != nil {
			return err
		}
		check(got)
		if !demoSeen {
			demoSeen = demoWouldFail(t, promURL, rules, demoAddr)
		}
		var errs []string
		for _, d := range drivers {
			if err := firing(got, d); err != nil {
				errs = append(errs, err.Error())
			} else if _, ok := firedAt[d]; !ok {
				firedAt[d] = time.Since(start)
				t.Logf("[%5.1fs] driver %s: %v firing", firedAt[d].Seconds(), d.spec.state, d.spec.fires)
			}
		}
		if len(errs) > 0 {
			return fmt.Errorf("%s", strings.Join(errs, "; "))
		}
		return nil
	})
	waitFor(t, "the demo's failing target to meet the failure alert's expression without its demo exclusion", alertTimeout, watch, func() error {
		if demoSeen = demoSeen || demoWouldFail(t, promURL, rules, demoAddr); !demoSeen {
			return fmt.Errorf("no series for instance %s", demoAddr)
		}
		return nil
	})
	t.Logf("the demo meets %s's condition but is excluded as a demo environment: not pending, not firing", failureAlert)

	whileFiring()

	for _, d := range drivers {
		if err := d.release(); err != nil {
			t.Fatal(err)
		}
		relAt := time.Now()
		released[d] = true
		waitFor(t, "driver "+d.spec.state+"'s alerts to resolve after its release", alertTimeout, watch, func() error {
			got, err := promAlerts(promURL)
			if err != nil {
				return err
			}
			// Resolution: the released driver's alerts are gone (inactive),
			// while every driver not yet released still fires.
			if as := got[d.addr]; len(as) > 0 {
				delete(got, d.addr) // check would fail on them: they are what we wait for
				check(got)
				return fmt.Errorf("still active: %v", as)
			}
			check(got)
			for _, o := range drivers {
				if !released[o] {
					if err := firing(got, o); err != nil {
						t.Fatalf("stopped firing while its driver still holds the state: %v", err)
					}
				}
			}
			return nil
		})
		t.Logf("[%5.1fs] driver %s released: %v resolved (inactive) %.1fs after the release", time.Since(start).Seconds(), d.spec.state, d.spec.fires, time.Since(relAt).Seconds())
	}
}

func containsKey(ks []alertKey, k alertKey) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// runRunbookQueries runs every runbook's PromQL while its alert fires:
// each must evaluate without error and return data, and the first (the
// alert's own measure) must show the instance that fires it.
func runRunbookQueries(t *testing.T, promURL string, drivers []*driver) {
	t.Helper()
	firingAt := map[string]string{}
	for _, d := range drivers {
		for _, k := range d.spec.fires {
			if _, ok := firingAt[k.alert]; !ok {
				firingAt[k.alert] = d.addr
			}
		}
	}
	qs := runbookQueries(t)
	alerts := make([]string, 0, len(qs))
	for a := range qs {
		alerts = append(alerts, a)
	}
	sort.Strings(alerts)
	for _, alert := range alerts {
		inst := firingAt[alert]
		if temporalOnly[alert] {
			continue // driven by the Temporal integration test
		}
		if inst == "" {
			t.Errorf("no driver fires %s: its runbook cannot be checked", alert)
			continue
		}
		for i, q := range qs[alert] {
			res, err := promInstant(promURL, q)
			if err != nil {
				t.Errorf("runbook %s query %d: %v\n%s", alert, i+1, err, q)
				continue
			}
			var insts []string
			for _, s := range res {
				insts = append(insts, s.metric["instance"])
			}
			if len(res) == 0 {
				t.Errorf("runbook %s query %d returns nothing while the alert fires on %s:\n%s", alert, i+1, inst, q)
			} else if i == 0 && !strings.Contains(strings.Join(insts, " "), inst) {
				t.Errorf("runbook %s query %d does not show the firing instance %s (has %v):\n%s", alert, i+1, inst, insts, q)
			}
			t.Logf("runbook %s query %d: %d series (instances %v)", alert, i+1, len(res), insts)
		}
	}
}

// driverStatusPage checks a driver's status page while it holds its Work:
// the JSON lists each held Work with its state (the runbooks send the
// operator there for live Work), and Chromium renders their rows.
func driverStatusPage(t *testing.T, d *driver, shot string) {
	t.Helper()
	statusURL := d.base + "/statusz"
	body, err := httpGet(statusURL + "?format=json")
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Work []struct {
			ID, Target, State      string
			CancelRequestedSeconds float64
		}
	}
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatal(err)
	}
	for _, h := range d.held {
		found := false
		for _, w := range page.Work {
			if w.ID == h.ID {
				found = true
				if w.Target != h.Target || w.State != h.State {
					t.Errorf("%s: work %s is %s/%s, the driver holds it %s/%s", statusURL, h.ID, w.Target, w.State, h.Target, h.State)
				}
				if h.State == "cancel-requested" && w.CancelRequestedSeconds <= 0 {
					t.Errorf("%s: cancel-requested work %s shows no time since the cancel request", statusURL, h.ID)
				}
			}
		}
		if !found {
			t.Errorf("%s lacks the held work %+v:\n%s", statusURL, h, body)
		}
	}
	browserCheck(t, statusURL, shot, browserExpect{work: d.held})
}

func artifactPath(t *testing.T, name string) string { return filepath.Join(artifactDir(t), name) }

// failureRunbookSearch runs the Jaeger step of the failure runbook on the
// demo's always-failing target: search the service with the tags
// agentwork.work.target=<target>, agentwork.work.state=failed and
// service.instance.id=<id> (read from target_info in Prometheus), and every
// span found there of that target's invoke_agent has error=true and an
// error.type of the runbook's classes. (Jaeger shows error=true on a span
// but does not find it by that tag: it derives it from the span status.)
func failureRunbookSearch(t *testing.T, jaegerQuery, target, instanceID string) {
	t.Helper()
	if instanceID == "" {
		t.Fatal("no service.instance.id for the demo from Prometheus's target_info")
	}
	tags, _ := json.Marshal(map[string]string{"agentwork.work.target": target, "agentwork.work.state": "failed", "service.instance.id": instanceID})
	u := jaegerQuery + "/api/traces?" + url.Values{"service": {demoService}, "tags": {string(tags)}, "limit": {"50"}, "lookback": {"1h"}}.Encode()
	body, err := httpGet(u)
	if err != nil {
		t.Fatal(err)
	}
	traces, err := decodeTraces(body)
	if err != nil {
		t.Fatal(err)
	}
	classes := []string{"error", "panic", "deadline_exceeded", "result_too_large"}
	found := 0
	for _, s := range allSpans(traces) {
		if s.OperationName != "invoke_agent "+target {
			continue
		}
		found++
		if e, _ := s.tag("error"); e != "true" {
			t.Errorf("failed span %s: error = %q, want true", s.SpanID, e)
		}
		if et, _ := s.tag("error.type"); !slices.Contains(classes, et) {
			t.Errorf("failed span %s: error.type %q, want one of %v (the runbook's classes)", s.SpanID, et, classes)
		}
	}
	if found == 0 {
		t.Errorf("Jaeger search %s found no failed invoke_agent %s span (%d traces): the failure runbook's step 2 finds nothing", u, target, len(traces))
	}
	t.Logf("failure runbook search (tags %s): %d failed invoke_agent %s spans", tags, found, target)
}

// instanceID returns the service_instance_id label of the target_info of
// the scraped instance addr, as the failure runbook reads it.
func instanceID(t *testing.T, promURL, addr string) string {
	t.Helper()
	res, err := promInstant(promURL, fmt.Sprintf(`max by (job, instance, service_name, service_instance_id) (target_info{instance=%q})`, addr))
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].metric["service_instance_id"] == "" {
		t.Fatalf("target_info of %s: %+v, want one series with service_instance_id", addr, res)
	}
	return res[0].metric["service_instance_id"]
}
