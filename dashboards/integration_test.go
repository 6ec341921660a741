//go:build integration

package dashboards

// The integration test: real Prometheus (Debian's 2.42) scraping the demo,
// real Jaeger (v1.76 all-in-one, in memory) receiving its traces, asserted
// through their HTTP APIs. Run it with `make integration` (.ci/integration),
// which prepares the binaries and sets:
//
//	PROMETHEUS_BIN  prometheus       PROMTOOL   promtool
//	JAEGER_BIN      jaeger           DEMO_BIN   the examples/research demo
//	DRIVER_BIN      examples/alertdriver, which holds the alerted states
//
// Prometheus evaluates the shipped alert rules with time compressed
// (compressRules) and every alert is driven to fire and to resolve
// (alerts_integration_test.go).
//
// Every process it starts is an exec.Cmd of this test, stopped by its pid
// (SIGTERM, then SIGKILL after a grace period) in t.Cleanup whatever the
// outcome, and printed (stdout and stderr) when the test fails. Everything
// listens on free 127.0.0.1 ports, and the test checks that through /proc.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

const (
	// demoService is the demo's OTel service name (examples/research).
	demoService = "agentwork-research"
	// demoJob is the scrape job of stack/prometheus.yml.
	demoJob = "agentwork-demo"
	// scrapeInterval is the test's scrape and rule evaluation interval.
	scrapeInterval = "1s"
	// rateWindow replaces $__rate_interval: wide enough to hold every
	// sample of the run, so rate() always has two.
	rateWindow = "1m"
	// stopGrace is how long a process gets between SIGTERM and SIGKILL.
	stopGrace = 10 * time.Second
	// startTimeout bounds each wait for a process to become ready.
	startTimeout = 90 * time.Second
	// assertTimeout bounds each wait for data to arrive (scrapes, traces).
	assertTimeout = 60 * time.Second
	// namesFile holds the telemetry package's span event names.
	namesFile = "../telemetry/names.go"
)

// lifecycle events every invoke_agent span of the scenario must show
// between them (telemetry/names.go: evQueued ... evGuidanceDelivered). The
// demo's scenario completes one child, cancels one after a cancel request,
// fails one and steers one.
var wantEvents = []string{"agentwork.work.queued", "agentwork.work.running", "agentwork.work.cancel_requested", "agentwork.work.completed",
	"agentwork.work.failed", "agentwork.work.cancelled", "agentwork.work.guidance.accepted", "agentwork.work.guidance.delivered"}

// terminalEvents: each invoke_agent span ends with exactly one of these.
var terminalEvents = []string{"agentwork.work.completed", "agentwork.work.failed", "agentwork.work.cancelled"}

// agentTargets are the demo's agent children (on the scripted model, whose
// provider name is "scripted"); fetch_dataset is a function child.
var agentTargets = map[string]bool{"research_web": true, "research_papers": true, "outline": true}

var httpClient = &http.Client{Timeout: 10 * time.Second}

type integrationBins struct {
	prometheus, promtool, jaeger, demo, driver string
}

func requireBins(t *testing.T) integrationBins {
	t.Helper()
	var b integrationBins
	for _, e := range []struct {
		env string
		dst *string
	}{
		{"PROMETHEUS_BIN", &b.prometheus}, {"PROMTOOL", &b.promtool}, {"JAEGER_BIN", &b.jaeger}, {"DEMO_BIN", &b.demo}, {"DRIVER_BIN", &b.driver},
	} {
		p := os.Getenv(e.env)
		if p == "" {
			t.Fatalf("%s is not set: run the integration test with `make integration` (.ci/integration prepares prometheus, promtool, jaeger, the demo and the alert driver and sets PROMETHEUS_BIN, PROMTOOL, JAEGER_BIN, DEMO_BIN, DRIVER_BIN)", e.env)
		}
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			t.Fatalf("%s=%s is not an executable file (%v)", e.env, p, err)
		}
		*e.dst = p
	}
	return b
}

func TestIntegration(t *testing.T) {
	bins := requireBins(t)
	dir := t.TempDir()
	canary := "AGENTWORK-CANARY-" + randomHex(t, 8)
	t.Logf("canary %s, work dir %s", canary, dir)
	start := time.Now()
	phase := func(name string) { t.Logf("[%6.2fs] %s", time.Since(start).Seconds(), name) }

	// ---- Jaeger ----
	jcfg, jaegerAddrs := jaegerConfig(t, dir)
	jaeger := startProc(t, dir, "jaeger", bins.jaeger, []string{"--config", jcfg}, os.Environ())
	jaegerQuery := "http://" + jaegerAddrs[".extensions.jaeger_query.http.endpoint"]
	waitFor(t, "Jaeger query API "+jaegerQuery+"/api/services", startTimeout, []*proc{jaeger}, func() error {
		_, err := httpGet(jaegerQuery + "/api/services")
		return err
	})
	for path, addr := range jaegerAddrs {
		waitFor(t, "Jaeger listener "+path+" on "+addr, startTimeout, []*proc{jaeger}, func() error {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
			}
			return err
		})
	}
	phase("jaeger ready")

	// ---- The demo ----
	demoAddr := freeAddrs(t, 1)[0]
	otlp := "http://" + jaegerAddrs[".receivers.otlp.protocols.http.endpoint"]
	demo := startProc(t, dir, "demo", bins.demo, []string{"-metrics-addr", demoAddr, "-every", "1s", "-canary", canary}, demoEnv(otlp))
	metricsURL := "http://" + demoAddr + "/metrics"
	waitFor(t, "the demo's "+metricsURL+" (it serves it after its scenario)", startTimeout, []*proc{demo, jaeger}, func() error {
		_, err := httpGet(metricsURL)
		return err
	})
	phase("demo serving /metrics")

	// ---- The alert drivers, one per alerted state ----
	drivers := startDrivers(t, dir, bins.driver)
	var driverAddrs []string
	for _, d := range drivers {
		driverAddrs = append(driverAddrs, d.addr)
	}
	phase("alert drivers holding their states")

	// ---- Prometheus ----
	promAddr := freeAddrs(t, 1)[0]
	pcfg, rules := prometheusConfig(t, dir, bins.promtool, demoAddr, driverAddrs)
	prom := startProc(t, dir, "prometheus", bins.prometheus, []string{
		"--config.file=" + pcfg,
		"--web.listen-address=" + promAddr,
		"--storage.tsdb.path=" + filepath.Join(dir, "tsdb"),
	}, os.Environ())
	promURL := "http://" + promAddr
	waitFor(t, "Prometheus "+promURL+"/-/ready", startTimeout, []*proc{prom}, func() error {
		_, err := httpGet(promURL + "/-/ready")
		return err
	})
	phase("prometheus ready")

	all := []*proc{jaeger, demo, prom}
	for _, d := range drivers {
		all = append(all, d.proc)
	}
	t.Run("listeners on 127.0.0.1 only", func(t *testing.T) {
		want := map[*proc][]string{prom: {promAddr}, demo: {demoAddr}}
		for _, d := range drivers {
			want[d.proc] = []string{d.addr}
		}
		for _, a := range jaegerAddrs {
			want[jaeger] = append(want[jaeger], a)
		}
		for _, p := range all {
			ls, err := listeners(p.pid())
			if err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
			t.Logf("%s (pid %d) listens on %v", p.name, p.pid(), ls)
			for _, l := range ls {
				if host, _, _ := net.SplitHostPort(l); host != "127.0.0.1" {
					t.Errorf("%s (pid %d) listens on %s: everything must bind 127.0.0.1 only", p.name, p.pid(), l)
				}
			}
			for _, w := range want[p] {
				if !slices.Contains(ls, w) {
					t.Errorf("%s (pid %d) does not listen on %s (has %v)", p.name, p.pid(), w, ls)
				}
			}
		}
	})

	// ---- Prometheus assertions ----
	t.Run("prometheus target up", func(t *testing.T) {
		waitFor(t, "the demo target to be up in "+promURL+"/api/v1/targets", assertTimeout, all, func() error {
			return targetUp(promURL, demoAddr)
		})
	})
	// rate() over the window needs two samples; wait for three scrapes.
	waitFor(t, "three scrapes of the demo", assertTimeout, all, func() error {
		v, err := promScalar(promURL, fmt.Sprintf(`count_over_time(up{job=%q}[%s])`, demoJob, rateWindow))
		if err != nil {
			return err
		}
		if v < 3 {
			return fmt.Errorf("%v scrapes so far", v)
		}
		return nil
	})
	phase("three scrapes done")
	// The targets Prometheus saw work queued for (read now, while the demo
	// is up: its series go stale once it stops); each must have its
	// invoke_agent span in Jaeger.
	targets := queuedTargets(t, promURL)

	t.Run("rules loaded and healthy", func(t *testing.T) {
		var names []string
		for _, r := range loadRules(t) {
			names = append(names, r.Alert)
		}
		waitFor(t, "every rule to be loaded and evaluated ("+promURL+"/api/v1/rules)", assertTimeout, all, func() error {
			return rulesHealthy(promURL, names)
		})
	})

	t.Run("panel queries return data", func(t *testing.T) {
		// The demo repeats its scenario every second while it serves, so
		// every rate, ratio and quantile has a finite value once a couple
		// of repeats are inside the rate window.
		queries := panelQueries(t)
		waitFor(t, "every panel query to return a finite value", assertTimeout, all, func() error {
			var missing []string
			for _, q := range queries {
				expr := grafanaExpr(t, q)
				res, err := promInstant(promURL, expr)
				if err != nil {
					return fmt.Errorf("%s: %s: %v", q.where, expr, err)
				}
				finite := 0
				for _, s := range res {
					if !math.IsNaN(s.value) && !math.IsInf(s.value, 0) {
						finite++
					}
				}
				if finite == 0 {
					missing = append(missing, fmt.Sprintf("%s (%d series, none finite): %s", q.where, len(res), expr))
				}
			}
			if len(missing) > 0 {
				return fmt.Errorf("%d panel queries without data:\n%s", len(missing), strings.Join(missing, "\n"))
			}
			return nil
		})
	})

	t.Run("alert expressions evaluate", func(t *testing.T) {
		for _, q := range alertQueries(t) {
			res, err := promInstant(promURL, q.expr)
			if err != nil {
				t.Errorf("%s: %v\n%s", q.where, err, q.expr)
				continue
			}
			t.Logf("%s: %d series", q.where, len(res))
		}
	})

	t.Run("alerts fire and resolve", func(t *testing.T) {
		alertsFireAndResolve(t, promURL, rules, demoAddr, drivers, all, func() {
			t.Run("runbook queries while firing", func(t *testing.T) {
				runRunbookQueries(t, promURL, drivers)
			})
			t.Run("status page with live work in Chromium", func(t *testing.T) {
				for _, d := range drivers {
					if d.spec.state == "slots-full" {
						driverStatusPage(t, d, artifactPath(t, "statusz.png"))
					}
				}
			})
		})
	})
	phase("alerts fired and resolved")

	t.Run("no canary in metrics", func(t *testing.T) {
		body, err := httpGet(metricsURL)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(body, []byte("agentwork_work_transitions_total")) {
			t.Errorf("%s has no agentwork_work_transitions_total:\n%s", metricsURL, body)
		}
		noCanary(t, canary, "the demo's "+metricsURL, body)

		for _, m := range []string{`{__name__=~"agentwork_.*"}`, fmt.Sprintf(`{job=%q}`, demoJob)} {
			u := promURL + "/api/v1/series?match[]=" + url.QueryEscape(m)
			body, err := httpGet(u)
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				Data []map[string]string `json:"data"`
			}
			if err := json.Unmarshal(body, &r); err != nil || len(r.Data) == 0 {
				t.Errorf("%s: no series (%v): %.300s", u, err, body)
			}
			noCanary(t, canary, "Prometheus series "+m, body)
		}
		body, err = httpGet(promURL + "/api/v1/labels")
		if err != nil {
			t.Fatal(err)
		}
		noCanary(t, canary, "Prometheus label names", body)
		var labels struct {
			Data []string `json:"data"`
		}
		if err := json.Unmarshal(body, &labels); err != nil {
			t.Fatal(err)
		}
		for _, l := range labels.Data {
			body, err := httpGet(promURL + "/api/v1/label/" + url.PathEscape(l) + "/values")
			if err != nil {
				t.Fatal(err)
			}
			noCanary(t, canary, "Prometheus values of label "+l, body)
		}
	})
	phase("prometheus assertions done")

	demoInstanceID := instanceID(t, promURL, demoAddr)

	t.Run("status page", func(t *testing.T) {
		statusURL := "http://" + demoAddr + "/statusz"
		body, err := httpGet(statusURL + "?format=json")
		if err != nil {
			t.Fatal(err)
		}
		noCanary(t, canary, statusURL+"?format=json", body)
		var page struct {
			Slots   struct{ InUse, Limit int }
			Queue   struct{ Length int }
			Targets []struct {
				Target string
				States map[string]int
			}
			Work []struct{ ID, Target, Owner, State string }
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatalf("%s: %v\n%s", statusURL, err, body)
		}
		names := map[string]bool{}
		for _, tg := range page.Targets {
			names[tg.Target] = len(tg.States) == 6
		}
		if page.Slots.Limit <= 0 || !names["research_web"] || !names["fetch_dataset"] {
			t.Errorf("status JSON: %s", body)
		}
		html, err := httpGet(statusURL)
		if err != nil {
			t.Fatal(err)
		}
		noCanary(t, canary, statusURL, html)
		for _, want := range []string{`id="slots-in-use"`, `id="queue-length"`, `http-equiv="refresh"`, `data-target="research_web"`} {
			if !bytes.Contains(html, []byte(want)) {
				t.Errorf("%s lacks %s", statusURL, want)
			}
		}
		browserCheck(t, statusURL, artifactPath(t, "statusz-demo.png"), browserExpect{targets: []string{"research_web", "research_papers", "fetch_dataset"}})
	})

	var logTraceIDs map[string]bool
	// Stop the demo: it flushes its last spans at shutdown, so the trace
	// checks below see everything it will ever export.
	t.Run("demo stops cleanly on SIGTERM", func(t *testing.T) {
		if err := demo.stop(); err != nil {
			t.Errorf("demo: %v", err)
		}
		out, _ := os.ReadFile(demo.stdout)
		if !bytes.Contains(out, []byte(canary)) {
			t.Errorf("the demo's transcript does not contain the canary %s: it was not planted, so the canary checks prove nothing", canary)
		}
		errOut, _ := os.ReadFile(demo.stderr)
		if !bytes.Contains(errOut, []byte("level=DEBUG")) {
			t.Logf("note: the demo logged no debug lines with AGENTWORK_LOG=debug; the log check below covers less")
		}
		noCanary(t, canary, "the demo's log lines (stderr, AGENTWORK_LOG=debug)", errOut)
		logTraceIDs = logTraces(t, errOut)
	})
	phase("demo stopped")

	// ---- Jaeger assertions ----
	var traces []jaegerTrace
	var rawTraces map[string][]byte
	t.Run("jaeger traces", func(t *testing.T) {
		waitFor(t, "Jaeger to hold the demo's traces (an invoke_agent span for each of "+strings.Join(targets, ", ")+")", assertTimeout, []*proc{jaeger}, func() error {
			var err error
			rawTraces, err = fetchTraces(jaegerQuery)
			if err != nil {
				return err
			}
			if traces, err = decodeTraces(rawTraces[demoService]); err != nil {
				return err
			}
			names := map[string]bool{}
			for _, s := range allSpans(traces) {
				names[s.OperationName] = true
			}
			for _, tg := range targets {
				if !names["invoke_agent "+tg] {
					return fmt.Errorf("no invoke_agent %s span yet (have %v)", tg, sortedKeys(names))
				}
			}
			if !names["execute_tool work"] {
				return fmt.Errorf("no execute_tool work span yet")
			}
			return nil
		})
		checkTraces(t, traces)
		have := map[string]bool{}
		for _, tr := range traces {
			have[tr.TraceID] = true
		}
		found := 0
		for id := range logTraceIDs {
			if have[id] || have[strings.TrimLeft(id, "0")] {
				found++
			}
		}
		if found == 0 {
			t.Errorf("none of the %d trace ids on the demo's log lines is a trace in Jaeger", len(logTraceIDs))
		}
		t.Logf("%d of %d log trace ids found in Jaeger", found, len(logTraceIDs))
	})

	t.Run("failure runbook's Jaeger search", func(t *testing.T) {
		failureRunbookSearch(t, jaegerQuery, "fetch_dataset", demoInstanceID)
	})

	t.Run("no canary in traces", func(t *testing.T) {
		if len(rawTraces) == 0 {
			t.Fatal("no traces fetched")
		}
		for svc, body := range rawTraces {
			noCanary(t, canary, "Jaeger traces of service "+svc, body)
		}
	})
	phase("jaeger assertions done")
}

// ---- processes ----

// proc is a process the test started.
type proc struct {
	name           string
	cmd            *exec.Cmd
	stdout, stderr string // log files
	done           chan struct{}
	err            error // cmd.Wait's, once done is closed
	stopErr        error
	stopped        bool
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// startProc starts bin and registers its stop (by pid) and, on failure, the
// printing of its output with t.Cleanup.
func startProc(t *testing.T, dir, name, bin string, args, env []string) *proc {
	t.Helper()
	p := &proc{name: name, stdout: filepath.Join(dir, name+".stdout"), stderr: filepath.Join(dir, name+".stderr"), done: make(chan struct{})}
	out, err := os.Create(p.stdout)
	if err != nil {
		t.Fatal(err)
	}
	errf, err := os.Create(p.stderr)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = env
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = out, errf
	// A backstop for when this test binary dies without running its
	// cleanups (a -timeout panic, a kill): the kernel kills the child.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		out.Close()
		errf.Close()
		t.Fatalf("start %s (%s): %v", name, bin, err)
	}
	t.Logf("started %s: pid %d: %s %s", name, p.pid(), bin, strings.Join(args, " "))
	go func() {
		p.err = p.cmd.Wait()
		out.Close()
		errf.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		if err := p.stop(); err != nil && !t.Failed() {
			t.Logf("%s: %v", name, err)
		}
		if t.Failed() {
			t.Logf("---- %s (pid %d) %s ----\n%s", name, p.pid(), p.stderr, tail(p.stderr, 8<<10))
			t.Logf("---- %s (pid %d) %s ----\n%s", name, p.pid(), p.stdout, tail(p.stdout, 4<<10))
		}
	})
	return p
}

// stop sends SIGTERM to the process by its pid, then SIGKILL after
// stopGrace. It returns nil when the process exited cleanly on SIGTERM (or
// had exited cleanly before), and an error otherwise. Calling it again
// returns the first result.
func (p *proc) stop() error {
	if p.stopped {
		return p.stopErr
	}
	p.stopped = true
	if p.exited() {
		if p.err != nil {
			p.stopErr = fmt.Errorf("had exited before being stopped: %v", p.err)
		}
		return p.stopErr
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		if p.err != nil {
			p.stopErr = fmt.Errorf("exited with %v after SIGTERM", p.err)
		}
		return p.stopErr
	case <-time.After(stopGrace):
	}
	_ = p.cmd.Process.Kill()
	select {
	case <-p.done:
		p.stopErr = fmt.Errorf("did not exit within %s of SIGTERM; killed (pid %d)", stopGrace, p.pid())
	case <-time.After(10 * time.Second):
		p.stopErr = fmt.Errorf("pid %d survived SIGKILL for 10s", p.pid())
	}
	return p.stopErr
}

// waitFor polls check until it returns nil, failing the test when timeout
// passes or when one of the watched processes exits first (a component
// that cannot start fails fast, with its output printed by the cleanup).
func waitFor(t *testing.T, what string, timeout time.Duration, watch []*proc, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		err := check()
		if err == nil {
			return
		}
		for _, p := range watch {
			if p.exited() {
				t.Fatalf("waiting for %s: %s (pid %d) exited: %v (its stderr is printed below)", what, p.name, p.pid(), p.err)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s: %v", timeout, what, err)
		}
		<-tick.C
	}
}

func tail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err.Error()
	}
	if fi.Size() > n {
		_, _ = f.Seek(-n, io.SeekEnd)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// demoEnv is this process's environment without the variables that would
// put the demo on a live model provider or change its telemetry, plus OTLP
// export to Jaeger and debug logging (so every log line is checked for the
// canary).
func demoEnv(otlpEndpoint string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "OPENAI_API_KEY", k == "ANTHROPIC_API_KEY", k == "OLLAMA_HOST", k == "AGENTWORK_LOG", strings.HasPrefix(k, "OTEL_"):
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"OTEL_EXPORTER_OTLP_ENDPOINT="+otlpEndpoint,
		"OTEL_BSP_SCHEDULE_DELAY=200",
		"AGENTWORK_LOG=debug",
	)
}

// ---- ports and listeners ----

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return strings.ToUpper(hex.EncodeToString(b))
}

// freeAddrs returns n distinct free 127.0.0.1 addresses (held open together
// while picking, so they differ).
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().String())
	}
	for _, ln := range lns {
		ln.Close()
	}
	return out
}

// listeners returns the addresses pid listens on: its TCP sockets in LISTEN
// state and its bound UDP sockets, from /proc (the sockets' inodes in
// /proc/PID/fd, matched in /proc/net/{tcp,tcp6,udp,udp6}).
func listeners(pid int) ([]string, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	var out []string
	for _, f := range []struct {
		file   string
		listen string // the state that means listening/bound; "" = any
	}{{"tcp", "0A"}, {"tcp6", "0A"}, {"udp", ""}, {"udp6", ""}} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f.file))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, err
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Scan() // header
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 || !inodes[fs[9]] || (f.listen != "" && fs[3] != f.listen) {
				continue
			}
			addr, err := procAddr(fs[1])
			if err != nil {
				return nil, fmt.Errorf("/proc/net/%s: %v", f.file, err)
			}
			if strings.HasPrefix(f.file, "udp") {
				addr = "udp:" + addr
			}
			out = append(out, addr)
		}
	}
	sort.Strings(out)
	return out, nil
}

// procAddr decodes /proc/net/tcp's "0100007F:1F90" (each 32-bit word of the
// address in host order, little-endian here) into "127.0.0.1:8080".
func procAddr(s string) (string, error) {
	h, p, ok := strings.Cut(s, ":")
	port, err := strconv.ParseUint(p, 16, 16)
	if !ok || err != nil {
		return "", fmt.Errorf("bad address %q", s)
	}
	raw, err := hex.DecodeString(h)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return "", fmt.Errorf("bad address %q", s)
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		ip[i], ip[i+1], ip[i+2], ip[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	if v4 := ip.To4(); v4 != nil && len(raw) == 16 && !ip.Equal(net.IPv6unspecified) {
		ip = v4
	}
	return net.JoinHostPort(ip.String(), strconv.Itoa(int(port))), nil
}

// ---- configs ----

// jaegerConfig writes stack/jaeger.yaml with every `endpoint` moved to a
// free 127.0.0.1 port, and returns its path and the endpoints by key path.
func jaegerConfig(t *testing.T, dir string) (string, map[string]string) {
	t.Helper()
	var cfg map[string]any
	readYAML(t, "stack/jaeger.yaml", &cfg)
	addrs := map[string]string{}
	var rewrite func(path string, v any)
	rewrite = func(path string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		for k, c := range m {
			if s, ok := c.(string); ok && k == "endpoint" {
				if host, _, err := net.SplitHostPort(s); err != nil || host != "127.0.0.1" {
					t.Fatalf("stack/jaeger.yaml %s.%s = %q: want 127.0.0.1:PORT", path, k, s)
				}
				a := freeAddrs(t, 1)[0]
				m[k] = a
				addrs[path+"."+k] = a
				continue
			}
			rewrite(path+"."+k, c)
		}
	}
	rewrite("", cfg)
	for _, k := range []string{
		".receivers.otlp.protocols.http.endpoint", ".receivers.otlp.protocols.grpc.endpoint",
		".extensions.jaeger_query.http.endpoint", ".extensions.jaeger_query.grpc.endpoint",
	} {
		if addrs[k] == "" {
			t.Fatalf("stack/jaeger.yaml has no %s", k)
		}
	}
	seen := map[string]bool{}
	for k, a := range addrs {
		if seen[a] {
			t.Fatalf("port %s given twice (%s)", a, k)
		}
		seen[a] = true
	}
	return writeYAML(t, filepath.Join(dir, "jaeger.yaml"), cfg), addrs
}

// prometheusConfig writes stack/prometheus.yml with its one job scraping
// the demo at demoAddr every scrapeInterval, a second job (driverJob, the
// same settings) scraping the alert drivers, rules evaluated as often, and
// rule_files replaced by their time-compressed copies (compressRules),
// and checks it and them with promtool. It returns the config's path and
// the compressed alert rules' path.
func prometheusConfig(t *testing.T, dir, promtool, demoAddr string, driverAddrs []string) (string, string) {
	t.Helper()
	var cfg map[string]any
	readYAML(t, "stack/prometheus.yml", &cfg)
	global, _ := cfg["global"].(map[string]any)
	if global == nil {
		global = map[string]any{}
		cfg["global"] = global
	}
	global["scrape_interval"] = scrapeInterval
	global["scrape_timeout"] = scrapeInterval
	global["evaluation_interval"] = scrapeInterval

	rfs, _ := cfg["rule_files"].([]any)
	if len(rfs) == 0 {
		t.Fatal("stack/prometheus.yml loads no rule_files")
	}
	rules := ""
	for i, rf := range rfs {
		src, err := os.ReadFile(filepath.Join("stack", fmt.Sprint(rf)))
		if err != nil {
			t.Fatal(err)
		}
		out, err := compressRules(src, compressFactor)
		if err != nil {
			t.Fatalf("compress %s: %v", rf, err)
		}
		rfs[i] = filepath.Join(dir, fmt.Sprintf("rules-%d.yml", i))
		if err := os.WriteFile(rfs[i].(string), out, 0o644); err != nil {
			t.Fatal(err)
		}
		if filepath.Base(fmt.Sprint(rf)) == filepath.Base(rulesFile) {
			rules = rfs[i].(string)
		}
	}
	if rules == "" {
		t.Fatalf("stack/prometheus.yml does not load %s", rulesFile)
	}

	scs, _ := cfg["scrape_configs"].([]any)
	if len(scs) != 1 {
		t.Fatalf("stack/prometheus.yml: want one scrape job, have %d", len(scs))
	}
	sc, _ := scs[0].(map[string]any)
	if sc["job_name"] != demoJob {
		t.Fatalf("stack/prometheus.yml: job %v, want %s", sc["job_name"], demoJob)
	}
	sc["scrape_interval"] = scrapeInterval
	sc["scrape_timeout"] = scrapeInterval
	sc["static_configs"] = []any{map[string]any{"targets": []any{demoAddr}}}
	dc := map[string]any{}
	for k, v := range sc {
		dc[k] = v
	}
	dc["job_name"] = driverJob
	var targets []any
	for _, a := range driverAddrs {
		targets = append(targets, a)
	}
	dc["static_configs"] = []any{map[string]any{"targets": targets}}
	cfg["scrape_configs"] = append(scs, dc)

	path := writeYAML(t, filepath.Join(dir, "prometheus.yml"), cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, promtool, "check", "config", path).CombinedOutput(); err != nil {
		t.Fatalf("promtool check config %s: %v\n%s", path, err, out)
	}
	if out, err := exec.CommandContext(ctx, promtool, "check", "rules", rules).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules %s (compressed): %v\n%s", rules, err, out)
	}
	return path, rules
}

func writeYAML(t *testing.T, path string, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ---- HTTP ----

func httpGet(u string) ([]byte, error) {
	resp, err := httpClient.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return body, fmt.Errorf("GET %s: %s: %.500s", u, resp.Status, body)
	}
	return body, nil
}

func noCanary(t *testing.T, canary, where string, body []byte) {
	t.Helper()
	if i := bytes.Index(body, []byte(canary)); i >= 0 {
		lo, hi := max(0, i-200), min(len(body), i+len(canary)+200)
		t.Errorf("the canary %s leaked into %s: ...%s...", canary, where, body[lo:hi])
	}
}

// ---- Prometheus ----

type promSample struct {
	metric map[string]string
	value  float64
}

// promInstant evaluates expr now through /api/v1/query. It returns an error
// when Prometheus reports one.
func promInstant(base, expr string) ([]promSample, error) {
	body, err := httpGet(base + "/api/v1/query?query=" + url.QueryEscape(expr))
	var r struct {
		Status    string   `json:"status"`
		ErrorType string   `json:"errorType"`
		Error     string   `json:"error"`
		Warnings  []string `json:"warnings"`
		Data      struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if jerr := json.Unmarshal(body, &r); jerr != nil {
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("decode: %v: %.300s", jerr, body)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s: %s", r.ErrorType, r.Error)
	}
	if len(r.Warnings) > 0 {
		return nil, fmt.Errorf("warnings: %v", r.Warnings)
	}
	switch r.Data.ResultType {
	case "vector":
		var v []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(r.Data.Result, &v); err != nil {
			return nil, err
		}
		out := make([]promSample, 0, len(v))
		for _, s := range v {
			f, err := strconv.ParseFloat(fmt.Sprint(s.Value[1]), 64)
			if err != nil {
				return nil, err
			}
			out = append(out, promSample{metric: s.Metric, value: f})
		}
		return out, nil
	case "scalar":
		var v [2]any
		if err := json.Unmarshal(r.Data.Result, &v); err != nil {
			return nil, err
		}
		f, err := strconv.ParseFloat(fmt.Sprint(v[1]), 64)
		if err != nil {
			return nil, err
		}
		return []promSample{{value: f}}, nil
	}
	return nil, fmt.Errorf("unexpected result type %q", r.Data.ResultType)
}

// promScalar evaluates expr and returns its single value.
func promScalar(base, expr string) (float64, error) {
	res, err := promInstant(base, expr)
	if err != nil {
		return 0, err
	}
	if len(res) != 1 {
		return 0, fmt.Errorf("%s: %d results, want 1", expr, len(res))
	}
	return res[0].value, nil
}

func targetUp(base, addr string) error {
	body, err := httpGet(base + "/api/v1/targets")
	if err != nil {
		return err
	}
	var r struct {
		Data struct {
			ActiveTargets []struct {
				ScrapePool string            `json:"scrapePool"`
				Labels     map[string]string `json:"labels"`
				Health     string            `json:"health"`
				LastError  string            `json:"lastError"`
			} `json:"activeTargets"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return err
	}
	for _, tg := range r.Data.ActiveTargets {
		if tg.Labels["instance"] != addr {
			continue
		}
		if tg.Labels["job"] != demoJob {
			return fmt.Errorf("target %s has job %q, want %s", addr, tg.Labels["job"], demoJob)
		}
		if tg.Health != "up" {
			return fmt.Errorf("target %s health %q (last error %q)", addr, tg.Health, tg.LastError)
		}
		return nil
	}
	return fmt.Errorf("no active target %s: %.500s", addr, body)
}

// rulesHealthy reports whether every named alert is loaded, has been
// evaluated, and evaluated without error.
func rulesHealthy(base string, names []string) error {
	body, err := httpGet(base + "/api/v1/rules")
	if err != nil {
		return err
	}
	var r struct {
		Data struct {
			Groups []struct {
				Rules []struct {
					Name      string `json:"name"`
					Health    string `json:"health"`
					LastError string `json:"lastError"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return err
	}
	health := map[string]string{}
	for _, g := range r.Data.Groups {
		for _, rule := range g.Rules {
			health[rule.Name] = rule.Health
			if rule.LastError != "" {
				health[rule.Name] += ": " + rule.LastError
			}
		}
	}
	for _, n := range names {
		if h := health[n]; h != "ok" {
			return fmt.Errorf("rule %s: health %q", n, h)
		}
	}
	return nil
}

// grafanaExpr turns a panel query into what Grafana would send: the rate
// interval becomes rateWindow, the target variable matches all.
func grafanaExpr(t *testing.T, q promQuery) string {
	t.Helper()
	e := strings.NewReplacer("${__rate_interval}", rateWindow, "$__rate_interval", rateWindow).Replace(q.expr)
	e, err := substitute(e)
	if err != nil {
		t.Fatalf("%s: %v", q.where, err)
	}
	return e
}

// queuedTargets returns the targets Prometheus saw work queued for: each
// must have its invoke_agent span in Jaeger.
func queuedTargets(t *testing.T, base string) []string {
	t.Helper()
	res, err := promInstant(base, fmt.Sprintf(`sum by (target) (agentwork_work_transitions_total{job=%q, state="queued"})`, demoJob))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range res {
		if s.value > 0 {
			out = append(out, s.metric["target"])
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		t.Fatal("Prometheus saw no work queued")
	}
	return out
}

// ---- Jaeger ----

type jaegerKV struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

type jaegerSpan struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	Tags []jaegerKV `json:"tags"`
	Logs []struct {
		Fields []jaegerKV `json:"fields"`
	} `json:"logs"`
}

type jaegerTrace struct {
	TraceID   string       `json:"traceID"`
	Spans     []jaegerSpan `json:"spans"`
	Processes map[string]struct {
		ServiceName string     `json:"serviceName"`
		Tags        []jaegerKV `json:"tags"`
	} `json:"processes"`
}

func (s jaegerSpan) tag(k string) (string, bool) {
	for _, kv := range s.Tags {
		if kv.Key == k {
			return fmt.Sprint(kv.Value), true
		}
	}
	return "", false
}

// events returns the span's log (span event) names.
func (s jaegerSpan) events() []string {
	var out []string
	for _, l := range s.Logs {
		for _, f := range l.Fields {
			if f.Key == "event" {
				out = append(out, fmt.Sprint(f.Value))
			}
		}
	}
	return out
}

// fetchTraces returns the raw /api/traces JSON of every service Jaeger
// knows, by service, and fails unless the demo's service is among them.
func fetchTraces(base string) (map[string][]byte, error) {
	body, err := httpGet(base + "/api/services")
	if err != nil {
		return nil, err
	}
	var svcs struct {
		Data []string `json:"data"`
	}
	if err := json.Unmarshal(body, &svcs); err != nil {
		return nil, err
	}
	if !slices.Contains(svcs.Data, demoService) {
		return nil, fmt.Errorf("/api/services lists %v, not %s", svcs.Data, demoService)
	}
	out := map[string][]byte{}
	for _, svc := range svcs.Data {
		u := base + "/api/traces?" + url.Values{"service": {svc}, "limit": {"1000"}, "lookback": {"1h"}}.Encode()
		body, err := httpGet(u)
		if err != nil {
			return nil, err
		}
		out[svc] = body
	}
	return out, nil
}

func decodeTraces(body []byte) ([]jaegerTrace, error) {
	var r struct {
		Data   []jaegerTrace `json:"data"`
		Errors any           `json:"errors"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	if r.Errors != nil {
		return nil, fmt.Errorf("jaeger errors: %v", r.Errors)
	}
	return r.Data, nil
}

func allSpans(ts []jaegerTrace) []jaegerSpan {
	var out []jaegerSpan
	for _, tr := range ts {
		out = append(out, tr.Spans...)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkTraces asserts the trace shape of DESIGN.md's telemetry contract.
func checkTraces(t *testing.T, traces []jaegerTrace) {
	t.Helper()
	names, err := os.ReadFile(namesFile)
	if err != nil {
		t.Fatalf("read %s (the span event names): %v", namesFile, err)
	}
	for _, e := range wantEvents {
		if !bytes.Contains(names, []byte(strconv.Quote(e))) {
			t.Errorf("event name %q is not in %s: update wantEvents to the telemetry package's names", e, namesFile)
		}
	}

	spans := allSpans(traces)
	byID := map[string]jaegerSpan{}
	count := map[string]int{}
	for _, s := range spans {
		byID[s.TraceID+"/"+s.SpanID] = s
		count[s.OperationName]++
	}
	t.Logf("%d traces, %d spans: %v", len(traces), len(spans), count)

	seen := map[string]bool{}
	invokes, foreground := 0, 0
	invokeByWork := map[string]jaegerSpan{}
	for _, s := range spans {
		label, ok := strings.CutPrefix(s.OperationName, "invoke_agent ")
		if !ok {
			continue
		}
		where := fmt.Sprintf("span %q (%s)", s.OperationName, s.SpanID)
		if tg, _ := s.tag("agentwork.work.target"); tg != label {
			t.Errorf("%s: agentwork.work.target = %q, want %q", where, tg, label)
		}
		if agentTargets[label] {
			if p, _ := s.tag("gen_ai.provider.name"); p != "scripted" {
				t.Errorf("%s: gen_ai.provider.name = %q, want scripted (from the child's model client)", where, p)
			}
			if id, _ := s.tag("gen_ai.agent.id"); id != label {
				t.Errorf("%s: gen_ai.agent.id = %q, want %q", where, id, label)
			}
		}
		id, _ := s.tag("agentwork.work.id")
		if id == "" {
			// A foreground agent child: a child span of its execute_tool call.
			foreground++
			parents := 0
			for _, r := range s.References {
				if r.RefType == "CHILD_OF" {
					if p := byID[r.TraceID+"/"+r.SpanID]; p.OperationName == "execute_tool "+label {
						parents++
					}
				}
			}
			if parents != 1 {
				t.Errorf("%s: a foreground invoke_agent span must be the child of its execute_tool %s span (references %+v)", where, label, s.References)
			}
			continue
		}
		invokes++
		invokeByWork[id] = s
		links := 0
		for _, r := range s.References {
			switch r.RefType {
			case "CHILD_OF":
				t.Errorf("%s: has a parent (CHILD_OF %s); the background execution must be a new root linked to its launch", where, r.SpanID)
			case "FOLLOWS_FROM":
				launch, ok := byID[r.TraceID+"/"+r.SpanID]
				switch {
				case !ok:
					t.Errorf("%s: FOLLOWS_FROM %s/%s, a span Jaeger does not have", where, r.TraceID, r.SpanID)
				case launch.OperationName != "execute_tool "+label:
					t.Errorf("%s: FOLLOWS_FROM %q, want its launch span %q", where, launch.OperationName, "execute_tool "+label)
				default:
					links++
				}
			}
		}
		if links != 1 {
			t.Errorf("%s: %d FOLLOWS_FROM references to its launch span, want 1 (references %+v)", where, links, s.References)
		}
		evs := s.events()
		for _, e := range evs {
			seen[e] = true
		}
		// A Work that awaited approval and was denied, or cancelled (the
		// demo's stop cancels one still awaiting), never ran.
		neverRan := slices.Contains(evs, "agentwork.work.approval_requested") &&
			(slices.Contains(evs, "agentwork.work.denied") || slices.Contains(evs, "agentwork.work.cancelled"))
		if !slices.Contains(evs, "agentwork.work.queued") || !slices.Contains(evs, "agentwork.work.running") && !neverRan {
			t.Errorf("%s: events %v, want agentwork.work.queued and agentwork.work.running", where, evs)
		}
		terminal := 0
		for _, e := range evs {
			if slices.Contains(terminalEvents, e) {
				terminal++
			}
		}
		if terminal != 1 {
			t.Errorf("%s: events %v, want exactly one of %v", where, evs, terminalEvents)
		}
	}
	if foreground == 0 {
		t.Errorf("no foreground invoke_agent span (the demo's outline child; spans: %v)", count)
	}
	// The reverse link: each launch span points at its invoke_agent span.
	launches := 0
	for _, s := range spans {
		label, ok := strings.CutPrefix(s.OperationName, "execute_tool ")
		if !ok || label == "work" {
			continue
		}
		if tt, _ := s.tag("gen_ai.tool.type"); tt != "function" {
			t.Errorf("span %q: gen_ai.tool.type = %q, want function", s.OperationName, tt)
		}
		if d, _ := s.tag("gen_ai.tool.description"); d == "" {
			t.Errorf("span %q: no gen_ai.tool.description", s.OperationName)
		}
		id, _ := s.tag("agentwork.work.id")
		inv, ok := invokeByWork[id]
		if id == "" || !ok {
			continue
		}
		launches++
		linked := false
		for _, r := range s.References {
			if r.RefType == "FOLLOWS_FROM" && r.TraceID == inv.TraceID && r.SpanID == inv.SpanID {
				linked = true
			}
		}
		if !linked {
			t.Errorf("launch span %q (%s): no FOLLOWS_FROM reference to its invoke_agent span %s (references %+v)", s.OperationName, s.SpanID, inv.SpanID, s.References)
		}
	}
	if launches == 0 {
		t.Errorf("no launch span with a work id matched an invoke_agent span")
	}
	// Resource attributes identify the process.
	for _, tr := range traces {
		for key, p := range tr.Processes {
			tags := map[string]string{}
			for _, kv := range p.Tags {
				tags[kv.Key] = fmt.Sprint(kv.Value)
			}
			if p.ServiceName != demoService || tags["service.version"] == "" || tags["service.instance.id"] == "" || tags["deployment.environment.name"] != "demo" {
				t.Errorf("trace %s process %s: service %q tags %v, want service.version, service.instance.id and deployment.environment.name=demo", tr.TraceID, key, p.ServiceName, tags)
			}
		}
	}
	if invokes == 0 {
		t.Fatalf("no invoke_agent spans (spans: %v)", count)
	}
	for _, e := range wantEvents {
		if !seen[e] {
			t.Errorf("no invoke_agent span has the %q event (seen %v)", e, sortedKeys(seen))
		}
	}

	works := 0
	for _, s := range spans {
		if s.OperationName != "execute_tool work" {
			continue
		}
		works++
		if a, ok := s.tag("agentwork.action"); !ok || a == "" {
			t.Errorf("execute_tool work span %s has no agentwork.action", s.SpanID)
		}
	}
	if works == 0 {
		t.Errorf("no execute_tool work spans (spans: %v)", count)
	}
}

var logLine = regexp.MustCompile(`msg=agentwork\.work\.[a-z_.]+ .*`)
var logIDs = regexp.MustCompile(`trace_id=([0-9a-f]{32}) span_id=([0-9a-f]{16})`)

// logTraces checks that every lifecycle log line of the demo carries
// trace_id and span_id and returns the trace ids.
func logTraces(t *testing.T, stderr []byte) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	lines := logLine.FindAll(stderr, -1)
	for _, l := range lines {
		m := logIDs.FindSubmatch(l)
		if m == nil {
			t.Errorf("log line without trace_id and span_id: %s", l)
			continue
		}
		ids[string(m[1])] = true
	}
	if len(lines) == 0 {
		t.Errorf("no agentwork.work.* log lines in the demo's stderr")
	}
	return ids
}

// artifactDir is where the test leaves artifacts (AGENTWORK_ARTIFACTS, or
// the test's temporary directory).
func artifactDir(t *testing.T) string {
	if d := os.Getenv("AGENTWORK_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}
