package dashboards

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// promtoolEnv names the promtool binary. .ci/run sets it (Debian's
// prometheus package, unpacked with dpkg -x); without it these tests skip.
const promtoolEnv = "PROMTOOL"

func promtool(t *testing.T) string {
	t.Helper()
	p := os.Getenv(promtoolEnv)
	if p == "" {
		t.Skipf("%s is not set: skipping promtool checks (set %s=/path/to/promtool, as .ci/run does)", promtoolEnv, promtoolEnv)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s=%s: %v", promtoolEnv, p, err)
	}
	return p
}

func runPromtool(t *testing.T, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, promtool(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %v: %v\n%s", args, err, out)
	}
	t.Logf("promtool %v:\n%s", args, out)
}

func TestPromtoolCheckRules(t *testing.T) {
	runPromtool(t, "check", "rules", rulesFile)
}

// TestPromtoolTestRules runs the alert unit tests: each alert fires on the
// series it is meant for and stays quiet on healthy ones.
func TestPromtoolTestRules(t *testing.T) {
	runPromtool(t, "test", "rules", "alerts/agentwork.rules.test.yml")
}

func TestPromtoolCheckConfig(t *testing.T) {
	runPromtool(t, "check", "config", "stack/prometheus.yml")
}
