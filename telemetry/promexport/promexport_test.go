package promexport_test

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/prometheus/common/expfmt"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.uber.org/goleak"

	"github.com/agentwork/agentwork/internal/fakeclock"
	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/telemetry/internal/scenario"
	"github.com/agentwork/agentwork/telemetry/promexport"
	"github.com/agentwork/agentwork/work/observe"
)

var update = flag.Bool("update", false, "rewrite testdata/scenario.golden")

const golden = "testdata/scenario.golden"

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// metricNames are the Prometheus names of DESIGN.md's Telemetry contract,
// plus the refusal counter, the concurrency limit, slots-in-use and
// oldest-age gauges, the budget counters and pool gauges, the orphan
// counter, the gauges of Work that waits (waiting jobs, Work awaiting
// approval, the oldest approval's age), the job polls counter, the
// update counter and sizes, and the counter of calls moved to the
// background.
var metricNames = []string{
	"agentwork_budget_pool_remaining",
	"agentwork_budget_pool_reserved",
	"agentwork_engine_available",
	"agentwork_guidance_messages_total",
	"agentwork_job_polls_total",
	"agentwork_status_block_rows",
	"agentwork_target_pollers",
	"agentwork_work_actions_total",
	"agentwork_work_awaiting_approval",
	"agentwork_work_backgrounded_total",
	"agentwork_work_budget_exhausted_total",
	"agentwork_work_concurrency_limit",
	"agentwork_work_duration_seconds",
	"agentwork_work_items",
	"agentwork_work_oldest_approval_age_seconds",
	"agentwork_work_oldest_cancel_requested_age_seconds",
	"agentwork_work_oldest_queued_age_seconds",
	"agentwork_work_orphaned_total",
	"agentwork_work_queue_wait_seconds",
	"agentwork_work_result_bytes",
	"agentwork_work_slots_in_use",
	"agentwork_work_starts_refused_total",
	"agentwork_work_tokens_total",
	"agentwork_work_tool_calls_total",
	"agentwork_work_transitions_total",
	"agentwork_work_turns_total",
	"agentwork_work_update_bytes",
	"agentwork_work_updates_total",
	"agentwork_work_waiting",
}

// runScenario runs the scripted scenario against a fresh Exporter and
// returns it; the scenario's running child is released at cleanup.
func runScenario(t *testing.T, opts ...promexport.Option) *promexport.Exporter {
	t.Helper()
	exp, err := promexport.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := exp.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	obs, err := telemetry.New(telemetry.WithMeterProvider(exp.MeterProvider()), telemetry.WithoutTracing())
	if err != nil {
		t.Fatal(err)
	}
	stop, err := scenario.Run(obs, fakeclock.New(scenario.Start))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	// A durable runner's deployment view beside the scenario's
	// in-process engine: one worker polls researcher's queue.
	t.Cleanup(obs.Watch(&deployment{observe.Snapshot{Time: scenario.Start, Deployment: true,
		Counts: []observe.TargetCounts{{Target: "researcher", Pollers: 1}}}}))
	return exp
}

// deployment is a watched durable engine's deployment view.
type deployment struct{ snap observe.Snapshot }

func (d *deployment) Snapshot(context.Context) (observe.Snapshot, error) { return d.snap, nil }

// TestScenarioGolden pins every exported metric family (name, type, help,
// labels and values) after the scripted scenario. Run with -update to
// rewrite the golden after an intended change; the dashboards module reads
// the metric names from the same file.
func TestScenarioGolden(t *testing.T) {
	exp := runScenario(t)
	if *update {
		mfs, err := exp.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		for _, mf := range mfs {
			if _, err := expfmt.MetricFamilyToText(&buf, mf); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(golden)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Without names GatherAndCompare compares everything the registry
	// holds: the golden must be the whole exposition, nothing else.
	if err := testutil.GatherAndCompare(exp.Registry(), f); err != nil {
		t.Fatal(err)
	}

	mfs, err := exp.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, mf := range mfs {
		got = append(got, mf.GetName())
		if mf.GetHelp() == "" {
			t.Errorf("%s has no HELP", mf.GetName())
		}
	}
	if !slices.Equal(got, metricNames) {
		t.Errorf("exported families:\n got %q\nwant %q", got, metricNames)
	}
}

func TestScenarioPromlint(t *testing.T) {
	exp := runScenario(t)
	mfs, err := exp.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	problems, err := promlint.NewWithMetricFamilies(mfs).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}

// TestHandler scrapes the Handler and finds exactly the golden's families.
func TestHandler(t *testing.T) {
	exp := runScenario(t)
	srv := httptest.NewServer(exp.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	for _, name := range metricNames {
		if !strings.Contains(string(body), "# TYPE "+name+" ") {
			t.Errorf("scrape has no %s", name)
		}
	}
	if strings.Contains(string(body), "otel_scope") || strings.Contains(string(body), "target_info") {
		t.Errorf("scrape has scope labels or target_info:\n%s", body)
	}
}

// TestDefaultRegistryUntouched: New registers nothing on the default
// registry unless asked to.
func TestDefaultRegistryUntouched(t *testing.T) {
	before, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	runScenario(t)
	after, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("default registry went from %d to %d families", len(before), len(after))
	}
}

// TestWithRegisterer: the caller's registry gets the same families as the
// Exporter's own.
func TestWithRegisterer(t *testing.T) {
	reg := prometheus.NewRegistry()
	exp := runScenario(t, promexport.WithRegisterer(reg))
	if n, err := testutil.GatherAndCount(reg, metricNames...); err != nil || n == 0 {
		t.Fatalf("caller's registry: %d series, %v", n, err)
	}
	own, err := testutil.GatherAndCount(exp.Registry(), metricNames...)
	if err != nil {
		t.Fatal(err)
	}
	theirs, _ := testutil.GatherAndCount(reg, metricNames...)
	if own != theirs {
		t.Errorf("own registry %d series, caller's %d", own, theirs)
	}
}

func TestWithTargetInfo(t *testing.T) {
	res := resource.NewSchemaless(attribute.String("service.name", "research-demo"))
	exp := runScenario(t, promexport.WithTargetInfo(res))
	if n, err := testutil.GatherAndCount(exp.Registry(), "target_info"); err != nil || n != 1 {
		t.Fatalf("target_info: %d series, %v", n, err)
	}
}

func TestShutdownIdempotent(t *testing.T) {
	exp, err := promexport.New()
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := exp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
