package restatetest_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	restate "github.com/restatedev/sdk-go"
	"github.com/restatedev/sdk-go/server"
	"go.uber.org/goleak"

	"github.com/agentwork/agentwork/runners/restate/restatetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type greeter struct{}

func (greeter) Greet(_ restate.Context, name string) (string, error) { return "hello " + name, nil }

// TestServer starts a server, registers an SDK deployment, invokes it
// through the ingress and stops the server: the process is gone after.
func TestServer(t *testing.T) {
	s, err := restatetest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	for _, u := range []string{s.Ingress, s.Admin} {
		if !strings.HasPrefix(u, "http://127.0.0.1:") {
			t.Fatalf("address %s is not loopback", u)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.NewRestate().Bind(restate.Reflect(greeter{})).Start(ctx, addr) }()
	defer func() { cancel(); <-done }()
	rctx, rcancel := context.WithTimeout(context.Background(), time.Minute)
	defer rcancel()
	if err := s.Register(rctx, "http://"+addr); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(s.Ingress+"/greeter/Greet", "application/json", strings.NewReader(`"you"`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if string(b) != `"hello you"` {
		t.Fatalf("Greet = %s %q; want \"hello you\"", resp.Status, b)
	}
	s.Stop()
	if _, err := http.Get(s.Admin + "/health"); err == nil {
		t.Fatal("the admin API still answers after Stop")
	}
}
