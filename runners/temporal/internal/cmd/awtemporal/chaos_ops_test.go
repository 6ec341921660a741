//go:build integration

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/harness"
)

// chaosJob is the Prometheus job of the chaos run's coordinator.
const chaosJob = "agentwork-chaos"

// alertWatch is a real Prometheus scraping a coordinator that exports
// the deployment's gauges, on the shipped rules compressed (make
// integration's): it records when AgentworkEngineUnavailable fired for
// it and when it resolved, and what the coordinator's status page said
// while the server was away.
type alertWatch struct {
	promURL, metrics string
	prom             *proc

	mu              sync.Mutex
	fired, resolved time.Time
	pageUnavailable bool
	stop            chan struct{}
	done            chan struct{}
}

// startAlertWatch starts Prometheus on the coordinator's metrics address
// (nil when PROMETHEUS_BIN or the rules are not there).
func startAlertWatch(t *testing.T, cl *cluster, dir, metrics string) *alertWatch {
	t.Helper()
	promBin, rules := os.Getenv("PROMETHEUS_BIN"), os.Getenv("AGENTWORK_COMPRESSED_RULES")
	if promBin == "" || rules == "" {
		t.Log("no PROMETHEUS_BIN or AGENTWORK_COMPRESSED_RULES: the alert is not checked")
		return nil
	}
	addr := func() string {
		a, err := harness.FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	// A scrape waits for the deployment view at most the coordinator's
	// snapshot bound (2 s): within the scrape timeout.
	cfg := fmt.Sprintf("global:\n  scrape_interval: 3s\n  scrape_timeout: 3s\n  evaluation_interval: 1s\nrule_files:\n  - %q\nscrape_configs:\n  - job_name: %s\n    static_configs:\n      - targets: [%q]\n",
		rules, chaosJob, metrics)
	pcfg := filepath.Join(dir, "prometheus-chaos.yml")
	if err := os.WriteFile(pcfg, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	prom, promURL := startPrometheus(t, cl, promBin, pcfg, filepath.Join(dir, "tsdb-chaos"), addr(), addr)
	a := &alertWatch{promURL: promURL, metrics: metrics, prom: prom, stop: make(chan struct{}), done: make(chan struct{})}
	waitUntil(t, "the coordinator scraped", time.Minute, prom, func() error {
		res, err := promQuery(promURL, `agentwork_engine_available{job="`+chaosJob+`"}`)
		if err != nil || len(res) != 1 || res[0].value != 1 {
			return fmt.Errorf("agentwork_engine_available: %v %v", res, err)
		}
		return nil
	})
	go a.run()
	return a
}

func (a *alertWatch) run() {
	defer close(a.done)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-tick.C:
		}
		firing := a.firing()
		var page struct {
			Engines struct{ Available bool } `json:"engines"`
		}
		b, err := get("http://" + a.metrics + "/statusz?format=json")
		unavailable := err == nil && json.Unmarshal(b, &page) == nil && !page.Engines.Available
		a.mu.Lock()
		if firing && a.fired.IsZero() {
			a.fired = time.Now()
		}
		if !firing && !a.fired.IsZero() && a.resolved.IsZero() {
			a.resolved = time.Now()
		}
		a.pageUnavailable = a.pageUnavailable || unavailable
		a.mu.Unlock()
	}
}

func (a *alertWatch) firing() bool {
	b, err := get(a.promURL + "/api/v1/alerts")
	if err != nil {
		return false
	}
	var r struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		} `json:"data"`
	}
	if json.Unmarshal(b, &r) != nil {
		return false
	}
	for _, al := range r.Data.Alerts {
		if al.Labels["alertname"] == "AgentworkEngineUnavailable" && al.Labels["job"] == chaosJob && al.State == "firing" {
			return true
		}
	}
	return false
}

// check waits (a minute at most) for the alert to resolve after the
// restart, and records in the tally whether it fired while the server was
// away and resolved after, and whether the status page said so.
func (a *alertWatch) check(tally *harness.Tally, down, restarted time.Time) {
	if a == nil {
		return
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		a.mu.Lock()
		done := !a.resolved.IsZero()
		a.mu.Unlock()
		if done {
			break
		}
	}
	close(a.stop)
	<-a.done
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.fired.IsZero() || a.fired.After(restarted):
		tally.Problems = append(tally.Problems, "AgentworkEngineUnavailable did not fire on Prometheus while the server was away")
	case a.resolved.IsZero():
		tally.Problems = append(tally.Problems, "AgentworkEngineUnavailable did not resolve within a minute of the restart")
	default:
		tally.Notes = append(tally.Notes, fmt.Sprintf("AgentworkEngineUnavailable fired %v into the outage, resolved %v after the restart (Prometheus, rules compressed)",
			a.fired.Sub(down).Round(time.Second), a.resolved.Sub(restarted).Round(time.Second)))
	}
	if !a.pageUnavailable {
		tally.Problems = append(tally.Problems, "the coordinator's /statusz never said the engine was unavailable during the outage")
	}
}
