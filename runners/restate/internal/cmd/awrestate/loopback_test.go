//go:build integration

package main

import (
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var ssUser = regexp.MustCompile(`pid=(\d+),`)

// checkLoopback fails t when a process of the cluster (the server, found
// by its ingress port, and every live child) listens beyond 127.0.0.1,
// reading the listening sockets with ss; it returns how many it saw.
func checkLoopback(t *testing.T, cl *cluster) int {
	t.Helper()
	out, err := exec.Command("ss", "-ltnpH").Output()
	if err != nil {
		t.Fatalf("ss -ltnpH: %v", err)
	}
	pids := map[string]bool{strconv.Itoa(os.Getpid()): true}
	for _, p := range cl.All() {
		select {
		case <-p.Done:
		default:
			pids[strconv.Itoa(p.Cmd.Process.Pid)] = true
		}
	}
	u, err := url.Parse(cl.srv.Ingress)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, l := range lines { // the server: the process on the ingress port
		f := strings.Fields(l)
		if len(f) >= 6 && strings.HasSuffix(f[3], ":"+u.Port()) {
			for _, m := range ssUser.FindAllStringSubmatch(l, -1) {
				pids[m[1]] = true
			}
		}
	}
	var seen int
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) < 6 {
			continue
		}
		for _, m := range ssUser.FindAllStringSubmatch(l, -1) {
			if !pids[m[1]] {
				continue
			}
			seen++
			if !strings.HasPrefix(f[3], "127.0.0.1:") {
				t.Errorf("a process of the cluster listens on %s: %s", f[3], l)
			}
		}
	}
	return seen
}
