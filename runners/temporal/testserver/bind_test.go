package testserver

import (
	"net"
	"testing"

	"github.com/agentwork/agentwork/runners/harness"
)

// TestStartPicksPortAgain gives the first server a port another listener
// holds: Start picks a fresh port and the server comes up on it.
func TestStartPicksPortAgain(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = taken.Close() }()
	calls := 0
	pickPort = func() (int, error) {
		calls++
		if calls == 1 {
			return taken.Addr().(*net.TCPAddr).Port, nil
		}
		return harness.FreePort()
	}
	defer func() { pickPort = harness.FreePort }()
	s, err := Start()
	if err != nil {
		t.Fatalf("Start with a taken port: %v", err)
	}
	defer s.Stop()
	if calls < 2 {
		t.Fatalf("the port was picked %d times; want a second pick after the taken port", calls)
	}
	if s.HostPort == taken.Addr().String() {
		t.Fatalf("the server's frontend is the taken port %s", s.HostPort)
	}
}
