package main

import (
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// backend is an h2c server on a loopback port whose kill closes its
// listener and every connection, as a process's death does.
type backend struct {
	l     net.Listener
	s     *http.Server
	mu    sync.Mutex
	conns []net.Conn
}

func h2cServer(t *testing.T, h http.Handler) (*backend, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	b := &backend{l: l}
	b.s = &http.Server{Handler: h, Protocols: &p, ConnState: func(c net.Conn, st http.ConnState) {
		if st == http.StateNew {
			b.mu.Lock()
			b.conns = append(b.conns, c)
			b.mu.Unlock()
		}
	}}
	done := make(chan struct{})
	go func() { defer close(done); _ = b.s.Serve(l) }()
	t.Cleanup(func() { b.kill(); _ = b.s.Close(); <-done })
	return b, l.Addr().String()
}

func (b *backend) kill() {
	_ = b.l.Close()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.conns {
		_ = c.Close()
	}
}

func h2cClient() *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: &p}}
}

// TestBalancerCutsStreamOfDeadBackend: a backend that dies mid-stream
// ends the proxied stream with an error (Restate then retries the
// attempt), and the next request goes to a live backend.
func TestBalancerCutsStreamOfDeadBackend(t *testing.T) {
	streaming := make(chan struct{})
	dead, deadAddr := h2cServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "a")
		w.(http.Flusher).Flush()
		close(streaming)
		<-r.Context().Done()
	}))
	_, liveAddr := h2cServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "live")
	}))
	b, err := newBalancer()
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	b.add(deadAddr)
	b.add(liveAddr)
	c := h2cClient()
	pr, pw := io.Pipe() // a request body that stays open, as Restate's does
	defer pw.Close()
	req, _ := http.NewRequest(http.MethodPost, b.URL+"/invoke", pr)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	<-streaming
	dead.kill()
	got := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(resp.Body)
		got <- err
	}()
	select {
	case err := <-got:
		if err == nil {
			t.Fatal("the stream of a dead backend ended cleanly")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream of a dead backend did not end")
	}
	// A request without a body is sent on to a live backend at once,
	// from every place in the rotation.
	for range 4 {
		resp, err := c.Get(b.URL + "/discover")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(body) != "live" {
			t.Fatalf("GET: %s %q, want the live backend's answer", resp.Status, body)
		}
	}
	for range 3 {
		resp, err := c.Post(b.URL+"/x", "text/plain", strings.NewReader("body"))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && string(body) != "live" {
			t.Fatalf("answer %q from a dead backend", body)
		}
	}
}
