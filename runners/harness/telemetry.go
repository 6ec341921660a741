package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CheckTelemetry reads every process's span file (*.spans) and log
// (*.log, stderr lines only: a coordinator's stdout is what the model
// reads) in dir and returns what is wrong: a Work of ids whose
// "invoke_agent" span was not exported exactly once across the
// processes (a Work that crossed an outage must end once), and any
// canary found in a span or a log line.
func CheckTelemetry(dir string, ids, canaries []string) []string {
	spans, _ := filepath.Glob(filepath.Join(dir, "*.spans"))
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	count := map[string]int{}
	var problems []string
	for _, f := range append(spans, logs...) {
		b, err := os.ReadFile(f)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "stdout: ") {
				continue
			}
			if strings.HasSuffix(f, ".spans") && strings.HasPrefix(line, "invoke_agent ") {
				for _, id := range ids {
					if strings.Contains(line, " agentwork.work.id="+id+" ") {
						count[id]++
					}
				}
			}
			for _, c := range canaries {
				if strings.Contains(line, c) {
					problems = append(problems, fmt.Sprintf("%s holds the canary %s", filepath.Base(f), c))
				}
			}
		}
	}
	for _, id := range ids {
		if count[id] != 1 {
			problems = append(problems, fmt.Sprintf("Work %s: %d invoke_agent spans across the processes, want 1", id, count[id]))
		}
	}
	return dedupe(problems)
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
