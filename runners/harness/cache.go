package harness

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// RepoRoot returns the directory above the working directory that holds
// the root module's go.mod (module github.com/agentwork/agentwork): test
// support keeps what it installs in its .cache.
func RepoRoot() (string, error) {
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
			return "", errors.New("harness: no repository root above the working directory")
		}
		dir = parent
	}
}

// Install returns dir/rel, making dir the first time with fill, once
// across processes (test binaries of several packages): it holds an
// exclusive lock on dir.lock, and fill writes into a temporary directory
// beside dir that is renamed to dir only once it holds rel, so that no
// caller ever sees a partial install.
func Install(dir, rel string, fill func(tmp string) error) (string, error) {
	bin := filepath.Join(dir, rel)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("harness: lock %s: %w", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil // another process installed it while this one waited
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".install-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := fill(tmp); err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(tmp, rel)); err != nil {
		return "", fmt.Errorf("harness: the install made no %s: %w", rel, err)
	}
	if err := os.RemoveAll(dir); err != nil { // a partial install of an older run
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	return bin, nil
}

// FreePorts returns n distinct TCP ports free on 127.0.0.1 now (another
// process may take one before the caller binds it).
func FreePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// LogBuffer keeps the first MiB written to it, for a server's output;
// it is safe for concurrent use.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write keeps p while the buffer holds at most a MiB, and drops it after.
func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 1<<20 {
		return len(p), nil
	}
	return l.b.Write(p)
}

// String returns what the buffer kept.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
