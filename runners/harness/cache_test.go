package harness

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// TestInstall installs once for concurrent callers, leaves nothing behind
// when the install fails, and finds what an earlier call installed.
func TestInstall(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tool", "v1")
	if _, err := Install(dir, "bin/tool", func(string) error { return errors.New("no network") }); err == nil {
		t.Fatal("a failed install returned no error")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a failed install left %s: %v", dir, err)
	}
	if _, err := Install(dir, "bin/tool", func(string) error { return nil }); err == nil {
		t.Fatal("an install that made no bin/tool returned no error")
	}
	var fills atomic.Int32
	fill := func(tmp string) error {
		fills.Add(1)
		if err := os.MkdirAll(filepath.Join(tmp, "bin"), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(tmp, "bin", "tool"), []byte("#!/bin/sh\n"), 0o755)
	}
	var wg sync.WaitGroup
	paths := make([]string, 4)
	errs := make([]error, 4)
	for i := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paths[i], errs[i] = Install(dir, "bin/tool", fill)
		}()
	}
	wg.Wait()
	for i := range paths {
		if errs[i] != nil || paths[i] != filepath.Join(dir, "bin", "tool") {
			t.Fatalf("Install = %q, %v", paths[i], errs[i])
		}
	}
	if n := fills.Load(); n != 1 {
		t.Fatalf("filled %d times; want once", n)
	}
}

// TestFreePorts returns distinct ports.
func TestFreePorts(t *testing.T) {
	ps, err := FreePorts(4)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ps {
		if p == 0 || seen[p] {
			t.Fatalf("FreePorts(4) = %v", ps)
		}
		seen[p] = true
	}
}
