package testserver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
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
	root, err := repoRoot()
	if err != nil {
		return "", err
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
	cache := filepath.Join(root, ".cache", "temporal")
	bin := filepath.Join(cache, key, "temporal")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(cache, key+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("testserver: lock %s: %w", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil // another process built it while this one waited
	}
	tmp := bin + ".tmp"
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", tmp, "github.com/temporalio/cli/cmd/temporal")
	cmd.Dir = tools
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("testserver: go build of the Temporal CLI in %s: %v\n%s", tools, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", err
	}
	return bin, nil
}

// repoRoot is the directory above the working directory holding the root
// module's go.mod (module github.com/agentwork/agentwork).
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(b), "module github.com/agentwork/agentwork\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testserver: no repository root above the working directory (set AGENTWORK_TEMPORAL_CLI)")
		}
		dir = parent
	}
}

// lockedBuffer keeps the first MiB written to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 1<<20 {
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
