package restatetest_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
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

// TestRequestIdentity starts a server that signs its requests with a key
// the test generated: it logged that it loaded it (Start checks), a
// deployment checking that key registers and answers, and one checking
// another key refuses the server's discovery, so it cannot register.
func TestRequestIdentity(t *testing.T) {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := restatetest.Start(restatetest.WithRequestIdentity(key))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if want := restatetest.IdentityKey(key.Public().(ed25519.PublicKey)); s.IdentityKey != want || !strings.HasPrefix(want, "publickeyv1_") {
		t.Fatalf("IdentityKey = %q; want %q", s.IdentityKey, want)
	}
	other, _, _ := ed25519.GenerateKey(rand.Reader)
	serve := func(keys ...string) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		h, err := server.NewRestate().WithLogger(slog.DiscardHandler, true).WithIdentityV1(keys...).Bind(restate.Reflect(greeter{})).Handler()
		if err != nil {
			t.Fatal(err)
		}
		var protocols http.Protocols
		protocols.SetUnencryptedHTTP2(true)
		srv := &http.Server{Handler: h, Protocols: &protocols, ReadHeaderTimeout: 5 * time.Second}
		done := make(chan struct{})
		go func() { defer close(done); _ = srv.Serve(l) }()
		t.Cleanup(func() { _ = srv.Close(); <-done })
		return "http://" + l.Addr().String()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Registered once, not retried: the admin API answers the refused
	// discovery with an error naming the deployment's 401.
	body, _ := json.Marshal(map[string]any{"uri": serve(restatetest.IdentityKey(other)), "force": true})
	resp, err := http.Post(s.Admin+"/deployments", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode/100 == 2 || !strings.Contains(string(b), "401") {
		t.Fatalf("a deployment checking another key: registration answered %s %s; want a refusal naming 401", resp.Status, b)
	}
	if err := s.Register(ctx, serve(s.IdentityKey)); err != nil {
		t.Fatalf("a deployment checking the server's key: %v", err)
	}
	resp, err = http.Post(s.Ingress+"/greeter/Greet", "application/json", strings.NewReader(`"you"`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if string(b) != `"hello you"` {
		t.Fatalf("Greet through a signing server = %s %q", resp.Status, b)
	}
}
