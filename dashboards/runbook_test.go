package dashboards

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// runbooksDir holds one runbook per alert, named after it.
const runbooksDir = "runbooks"

// promqlBlock is a fenced ```promql block of a runbook.
var promqlBlock = regexp.MustCompile("(?s)```promql\n(.*?)```")

// runbookQueries returns the promql blocks of the runbook of each alert,
// in order, by alert name.
func runbookQueries(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, r := range loadRules(t) {
		path := filepath.Join(runbooksDir, r.Alert+".md")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", r.Alert, err)
		}
		for _, m := range promqlBlock.FindAllSubmatch(b, -1) {
			out[r.Alert] = append(out[r.Alert], strings.TrimSpace(string(m[1])))
		}
	}
	return out
}

// TestRunbooks checks that every alert's runbook has PromQL to run (the
// static checks of allQueries parse it and check its metrics and labels
// against the golden) and points at the status page, where live Work is.
func TestRunbooks(t *testing.T) {
	qs := runbookQueries(t)
	for _, r := range loadRules(t) {
		if len(qs[r.Alert]) == 0 {
			t.Errorf("runbook of %s has no ```promql block", r.Alert)
		}
		b, _ := os.ReadFile(filepath.Join(runbooksDir, r.Alert+".md"))
		if !strings.Contains(string(b), "/statusz") && r.Alert != "AgentworkWorkFailureRatioHigh" {
			t.Errorf("runbook of %s does not point at the status page /statusz", r.Alert)
		}
	}
}
