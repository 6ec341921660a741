package restatetest

import (
	"github.com/agentwork/agentwork/runners/harness"
	"net"
	"net/http"
	"testing"
)

// TestStartPicksPortsAgain gives the first server a port another
// listener holds: Start picks fresh ports and the server comes up, on
// ports other than the taken one.
func TestStartPicksPortsAgain(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = taken.Close() }()
	port := taken.Addr().(*net.TCPAddr).Port
	calls := 0
	pickPorts = func(n int) ([]int, error) {
		calls++
		ports, err := harness.FreePorts(n)
		if calls == 1 && err == nil {
			ports[1] = port // the ingress
		}
		return ports, err
	}
	defer func() { pickPorts = harness.FreePorts }()
	s, err := Start()
	if err != nil {
		t.Fatalf("Start with a taken port: %v", err)
	}
	defer s.Stop()
	if calls < 2 {
		t.Fatalf("ports were picked %d times; want a second pick after the taken port", calls)
	}
	resp, err := http.Get(s.Ingress + "/restate/health")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if s.Ingress == "http://"+taken.Addr().String() {
		t.Fatalf("the server's ingress is the taken port %s", s.Ingress)
	}
}
