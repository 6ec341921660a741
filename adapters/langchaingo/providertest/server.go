package providertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Default bounds of a server.
const (
	DefaultMaxRequests  = 200
	DefaultMaxBodyBytes = 4 << 20
)

// Option configures a server.
type Option interface{ apply(*config) }

type config struct {
	maxRequests int
	maxBody     int64
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithMaxRequests bounds the number of requests the server answers
// (default DefaultMaxRequests); each one beyond fails the test. n <= 0 is
// ignored.
func WithMaxRequests(n int) Option {
	return optionFunc(func(c *config) {
		if n > 0 {
			c.maxRequests = n
		}
	})
}

// WithMaxBodyBytes bounds one request body (default DefaultMaxBodyBytes); a
// larger one fails the test. n <= 0 is ignored.
func WithMaxBodyBytes(n int64) Option {
	return optionFunc(func(c *config) {
		if n > 0 {
			c.maxBody = n
		}
	})
}

// Server is a fake provider on an httptest server. Create it in a test
// with NewOpenAI, NewAnthropic or NewOllama (it stops when the test ends),
// or anywhere else with StartOpenAI, StartAnthropic or StartOllama (the
// caller closes it).
type Server struct {
	t      testing.TB // nil for a server started without a test
	api    string
	script Script
	cfg    config
	srv    *httptest.Server
	stop   context.CancelFunc
	routes map[string]endpoint

	mu    sync.Mutex
	n     int
	calls int
	reqs  []*Request
	errs  []error

	closeOnce sync.Once
}

// endpoint is one API's wire format on one path.
type endpoint struct {
	api string
	// parse fills req from its body; an error is a malformed request (400).
	parse func(req *Request) error
	// check returns the message of the provider's own rejection of a
	// well-formed request (status, message), or status 0.
	check func(req *Request) (int, string)
	// write answers with reply (already given call ids).
	write func(w http.ResponseWriter, req *Request, reply Reply) error
	// writeError answers with the provider's error body.
	writeError func(w http.ResponseWriter, status int, msg string)
	// callID makes the n-th call id in the provider's shape ("" for none).
	callID func(n int) string
}

func newServer(t testing.TB, api string, script Script, opts []Option, routes map[string]endpoint) *Server {
	t.Helper()
	s, err := startServer(t, api, script, opts, routes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// startServer starts a server; t may be nil.
func startServer(t testing.TB, api string, script Script, opts []Option, routes map[string]endpoint) (*Server, error) {
	if script == nil {
		return nil, errors.New("providertest: nil Script")
	}
	cfg := config{maxRequests: DefaultMaxRequests, maxBody: DefaultMaxBodyBytes}
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	base, stop := context.WithCancel(context.Background())
	s := &Server{t: t, api: api, script: script, cfg: cfg, stop: stop, routes: routes}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.Config.BaseContext = func(net.Listener) context.Context { return base }
	s.srv.Start()
	return s, nil
}

// URL returns the server's root URL, for example http://127.0.0.1:41234.
func (s *Server) URL() string { return s.srv.URL }

// BaseURL returns the base URL to give the provider's langchaingo client:
// URL+"/v1" for openai.WithBaseURL and anthropic.WithBaseURL, URL for
// Ollama's native client (ollama.WithServerURL).
func (s *Server) BaseURL() string {
	if s.api == "ollama" {
		return s.srv.URL
	}
	return s.srv.URL + "/v1"
}

// OpenAIBaseURL returns URL+"/v1": the chat-completions base URL of an
// OpenAI server and of an Ollama server's OpenAI-compatible endpoint.
func (s *Server) OpenAIBaseURL() string { return s.srv.URL + "/v1" }

// Requests returns copies of the requests received so far, in arrival
// order (a request is recorded before its script is asked).
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Request, len(s.reqs))
	for i, r := range s.reqs {
		out[i] = r.clone()
	}
	return out
}

// Err returns every failure the server saw (what fails the test of a
// server made with NewOpenAI, NewAnthropic or NewOllama: a malformed
// request, one the real API would refuse, a used-up script, a request
// over the bounds), joined, or nil. It is how a server started without a
// test (StartOpenAI, StartAnthropic, StartOllama) reports them; each such
// request is also answered with the provider's error.
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.errs...)
}

// Close stops the server: waiting scripts see their request's context end,
// then it waits for the handlers to return. It is idempotent; it is called
// when the test ends for a server made with a testing.TB, and the caller
// must call it for one from StartOpenAI, StartAnthropic or StartOllama.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.stop()
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

func (s *Server) fail(format string, args ...any) {
	err := fmt.Errorf(format, args...)
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
	if s.t != nil {
		s.t.Errorf(format, args...)
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	e, ok := s.routes[r.URL.Path]
	if !ok {
		s.fail("providertest: %s %s: no such endpoint on this %s server", r.Method, r.URL.Path, s.api)
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodPost {
		s.fail("providertest: %s %s: want POST", r.Method, r.URL.Path)
		e.writeError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	s.mu.Lock()
	s.n++
	n := s.n
	s.mu.Unlock()
	if n > s.cfg.maxRequests {
		s.fail("providertest: request %d is over the limit of %d requests", n, s.cfg.maxRequests)
		e.writeError(w, http.StatusTooManyRequests, "providertest: too many requests")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.fail("providertest: request %d: body over %d bytes", n, s.cfg.maxBody)
			e.writeError(w, http.StatusRequestEntityTooLarge, "providertest: request body too large")
			return
		}
		e.writeError(w, http.StatusBadRequest, "reading body: "+err.Error())
		return
	}
	req := &Request{N: n, API: e.api, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, ctx: r.Context(), fail: s.fail}
	if err := e.parse(req); err != nil {
		s.record(req)
		s.fail("providertest: request %d (%s): malformed: %v", n, r.URL.Path, err)
		e.writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if status, msg := e.check(req); status != 0 {
		s.record(req)
		s.fail("providertest: request %d (%s): the real API would refuse it: %s", n, r.URL.Path, msg)
		e.writeError(w, status, msg)
		return
	}
	s.record(req)
	reply := s.script.Next(req)
	if reply.Status != 0 {
		e.writeError(w, reply.Status, reply.Text)
		return
	}
	reply.ToolCalls = append([]ToolCall(nil), reply.ToolCalls...)
	for i := range reply.ToolCalls {
		if reply.ToolCalls[i].ID == "" {
			s.mu.Lock()
			s.calls++
			c := s.calls
			s.mu.Unlock()
			reply.ToolCalls[i].ID = e.callID(c)
		}
		if !isJSONObject(reply.ToolCalls[i].Arguments) {
			s.fail("providertest: request %d: scripted call of %q: arguments are not a JSON object: %q", n, reply.ToolCalls[i].Name, clip(reply.ToolCalls[i].Arguments, 80))
		}
	}
	if err := e.write(w, req, reply); err != nil && r.Context().Err() == nil {
		s.fail("providertest: request %d: writing the reply: %v", n, err)
	}
}

func (s *Server) record(req *Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req.clone())
	s.mu.Unlock()
}

func routes(e endpoint, paths ...string) map[string]endpoint {
	m := make(map[string]endpoint, len(paths))
	for _, p := range paths {
		m[p] = e
	}
	return m
}

// checkToolNames reports duplicate or empty tool names.
func checkToolNames(tools []Tool) string {
	seen := map[string]bool{}
	for _, t := range tools {
		if t.Name == "" {
			return "a tool has no name"
		}
		if seen[t.Name] {
			return fmt.Sprintf("tool names must be unique: %q is declared twice", t.Name)
		}
		seen[t.Name] = true
		if typ, ok := t.Parameters["type"]; t.Parameters != nil && (!ok || typ != "object") {
			return fmt.Sprintf("tool %q: the input schema must be a JSON schema of type object", t.Name)
		}
	}
	return ""
}

func joinNonEmpty(parts []string, sep string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}
