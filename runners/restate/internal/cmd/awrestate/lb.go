package main

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"strings"
	"sync"
	"time"
)

// balancer is a loopback HTTP/2 cleartext reverse proxy in front of
// several service processes, registered with Restate as their one
// deployment URL (Restate routes a service to one URL and does not
// balance). Each request, which is one invocation attempt of the Restate
// protocol, goes to the next backend in turn; a backend refusing its
// connection is skipped for a while (the attempt answered 502, which
// Restate retries). A balancer is safe for concurrent use.
type balancer struct {
	URL string

	mu       sync.Mutex
	backends []string // host:port
	down     map[string]time.Time
	next     int

	srv  *http.Server
	tr   *http.Transport
	done chan struct{}
}

// skipFor is how long a backend that refused a connection is skipped.
const skipFor = 2 * time.Second

func newBalancer() (*balancer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &balancer{URL: "http://" + l.Addr().String(), down: map[string]time.Time{}, done: make(chan struct{})}
	var h2c http.Protocols
	h2c.SetUnencryptedHTTP2(true)
	b.tr = &http.Transport{Protocols: &h2c, DialContext: (&net.Dialer{Timeout: 2 * time.Second}).DialContext}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", b.pick()
			if pr.In.Body != nil && pr.In.Body != http.NoBody {
				pr.Out.Body = closingBody{pr.In.Body}
			}
		},
		Transport:     b.tr,
		FlushInterval: -1, // the protocol streams both ways
		ErrorLog:      log.New(debugWriter{}, "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			var op *net.OpError
			if errors.As(err, &op) && op.Op == "dial" {
				b.mu.Lock()
				b.down[r.URL.Host] = time.Now().Add(skipFor)
				b.mu.Unlock()
			}
			debugf("lb error %s: %v", r.URL.Host, err)
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		debugf("lb begin %s %s", r.Method, r.URL.Path)
		defer debugf("lb end %s %s", r.Method, r.URL.Path)
		proxy.ServeHTTP(w, r)
	})
	b.srv = &http.Server{Handler: h, Protocols: &h2c, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		defer close(b.done)
		_ = b.srv.Serve(l)
	}()
	return b, nil
}

// closingBody passes Close to the inbound request body. The transport
// closes the outbound body when the backend's connection dies; the
// proxy's own wrapper ignores that Close, which leaves the transport
// reading an idle inbound stream forever (Restate's stays open) and the
// response never failing.
type closingBody struct{ io.ReadCloser }

// add puts a backend (host:port) in the rotation.
func (b *balancer) add(addr string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.down, addr)
	for _, a := range b.backends {
		if a == addr {
			return
		}
	}
	b.backends = append(b.backends, addr)
}

// remove takes a backend out of the rotation.
func (b *balancer) remove(addr string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, a := range b.backends {
		if a == addr {
			b.backends = append(b.backends[:i], b.backends[i+1:]...)
			return
		}
	}
}

// pick is the next backend not skipped (any, when all are).
func (b *balancer) pick() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.backends)
	if n == 0 {
		return "127.0.0.1:1" // refused: Restate retries
	}
	now := time.Now()
	for range n {
		a := b.backends[b.next%n]
		b.next++
		if now.After(b.down[a]) {
			return a
		}
	}
	a := b.backends[b.next%n]
	b.next++
	return a
}

// close stops the balancer and cuts its streams.
func (b *balancer) close() {
	_ = b.srv.Close()
	<-b.done
	b.tr.CloseIdleConnections()
}

type debugWriter struct{}

func (debugWriter) Write(p []byte) (int, error) {
	debugf("%s", strings.TrimSpace(string(p)))
	return len(p), nil
}

// debugf logs the balancer's traffic to stderr when AWRESTATE_DEBUG is
// set (paths and backends only).
func debugf(f string, a ...any) {
	if os.Getenv("AWRESTATE_DEBUG") != "" {
		fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05.000 ")+f+"\n", a...)
	}
}
