package testserver

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/agentwork/agentwork/runners/harness"
)

// Binary returns the Temporal CLI: AGENTWORK_TEMPORAL_CLI when set, else
// the one cached as $REPO/.cache/temporal/<key>/temporal, built there
// the first time from the repository's tools module tools/temporal
// (github.com/temporalio/cli/cmd/temporal at the version its go.mod
// pins; CGO_ENABLED=0 go build -trimpath -ldflags="-s -w"). The key is
// a hash of tools/temporal's go.mod and go.sum, so a change of the pin
// builds anew. Concurrent callers (test binaries of several packages)
// build it once: the build holds an exclusive lock on
// .cache/temporal/<key>.lock and writes a temporary file renamed into
// place when complete, so no caller ever runs a partial binary.
func Binary() (string, error) {
	if b := os.Getenv("AGENTWORK_TEMPORAL_CLI"); b != "" {
		return b, nil
	}
	root, err := harness.RepoRoot()
	if err != nil {
		return "", fmt.Errorf("testserver: %w (set AGENTWORK_TEMPORAL_CLI)", err)
	}
	tools := filepath.Join(root, "tools", "temporal")
	h := sha256.New()
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(tools, f))
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	key := hex.EncodeToString(h.Sum(nil))[:16]
	return harness.Install(filepath.Join(root, ".cache", "temporal", key), "temporal", func(tmp string) error {
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(tmp, "temporal"), "github.com/temporalio/cli/cmd/temporal")
		cmd.Dir = tools
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("testserver: go build of the Temporal CLI in %s: %v\n%s", tools, err, out)
		}
		return nil
	})
}
