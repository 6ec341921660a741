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
// connection is skipped for a while (an attempt is answered 502, which
// Restate retries; a request without a body goes to the next backend). A
// backend's death mid-stream ends the stream with an error. A balancer is
// safe for concurrent use.
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
			if pr.Out.Body != nil && pr.Out.Body != http.NoBody {
				pr.Out.Body = closingBody{pr.In.Body}
			}
		},
		Transport:     retrying{b},
		FlushInterval: -1, // the protocol streams both ways
		ErrorLog:      log.New(debugWriter{}, "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
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

// retrying is the balancer's transport: a backend that refuses the
// connection is skipped for a while, and a request without a body (the
// deployment's discovery) goes to the next backend at once; one with a
// body cannot be sent again, and is answered 502.
type retrying struct{ b *balancer }

func (rt retrying) RoundTrip(req *http.Request) (*http.Response, error) {
	for try := 0; ; try++ {
		resp, err := rt.b.tr.RoundTrip(req)
		var op *net.OpError
		if err == nil || !errors.As(err, &op) || op.Op != "dial" {
			return resp, err
		}
		rt.b.mu.Lock()
		rt.b.down[req.URL.Host] = time.Now().Add(skipFor)
		n := len(rt.b.backends)
		rt.b.mu.Unlock()
		if (req.Body != nil && req.Body != http.NoBody) || try >= n {
			return nil, err
		}
		req = req.Clone(req.Context())
		req.URL.Host = rt.b.pick()
	}
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
