// Command gen writes the agentwork Grafana dashboards as JSON.
//
// Run it from the dashboards module's root (`make dashboards` does):
//
//	go run ./cmd/gen
//
// It writes grafana/agentwork-overview.json; -dir changes the module root it
// writes under. The output is deterministic, and a test in the dashboards
// package fails when the committed file differs from it.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentwork/agentwork/dashboards"
)

func main() {
	dir := flag.String("dir", ".", "root of the dashboards module to write under")
	flag.Parse()
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	b, err := dashboards.OverviewJSON()
	if err != nil {
		return err
	}
	out := filepath.Join(dir, filepath.FromSlash(dashboards.OverviewFile))
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		return err
	}
	fmt.Println("wrote", out)
	return nil
}
