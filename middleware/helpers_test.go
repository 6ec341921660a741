package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentwork/agentwork/internal/fakeclock"
	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is the fake clock's start; its ISO form is 2026-01-02T03:04:05.000Z.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// observer is a enginetest.Recorder that also lets a test wait, without polling,
// for a lifecycle event.
type observer struct {
	enginetest.Recorder
	mu   sync.Mutex
	cond sync.Cond
}

func newObserver() *observer {
	o := &observer{}
	o.cond.L = &o.mu
	return o
}

func (o *observer) Event(ctx context.Context, e observe.Event) {
	o.Recorder.Event(ctx, e)
	o.mu.Lock()
	o.cond.Broadcast()
	o.mu.Unlock()
}

func (o *observer) has(id string, typ observe.EventType) bool {
	for _, e := range o.Events() {
		if e.WorkID == id && e.Type == typ {
			return true
		}
	}
	return false
}

// wait blocks until the Work id has had an event of type typ.
func (o *observer) wait(id string, typ observe.EventType) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for !o.has(id, typ) {
		o.cond.Wait()
	}
}

// env is an in-process engine on a fake clock (no per-Work deadline, so the
// only timers are result waits) with a recording observer.
type env struct {
	t     *testing.T
	sup   *work.Engine
	clock *fakeclock.Clock
	obs   *observer
}

func newEnv(t *testing.T, opts ...work.Option) *env {
	t.Helper()
	e := &env{t: t, clock: fakeclock.New(t0), obs: newObserver()}
	base := []work.Option{work.WithClock(e.clock), work.WithObserver(e.obs), work.WithDefaultBudget(work.Budget{MaxDuration: -1})}
	e.sup = work.New(append(base, opts...)...)
	t.Cleanup(func() {
		if err := e.sup.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

func (e *env) prepare(owner string, entries map[string]any) *middleware.Kit {
	e.t.Helper()
	s, err := middleware.Prepare(e.sup, work.NewOwner(owner), entries)
	if err != nil {
		e.t.Fatalf("Prepare: %v", err)
	}
	return s
}

// list returns the owner's List as JSON.
func (e *env) list(owner work.Owner) string {
	e.t.Helper()
	l, err := e.sup.List(context.Background(), owner)
	if err != nil {
		e.t.Fatalf("List: %v", err)
	}
	return mustJSON(e.t, l)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tool returns the Kit's tool named name.
func tool(t *testing.T, s *middleware.Kit, name string) middleware.Tool {
	t.Helper()
	for _, tl := range s.Tools() {
		if tl.Name() == name {
			return tl
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

// call calls the tool and fails the test on a Go error: no tool may ever
// return one.
func call(t *testing.T, tl middleware.Tool, input string) string {
	t.Helper()
	return callCtx(t, context.Background(), tl, input)
}

func callCtx(t *testing.T, ctx context.Context, tl middleware.Tool, input string) string {
	t.Helper()
	out, err := tl.Call(ctx, input)
	if err != nil {
		t.Fatalf("%s.Call(%q) returned a Go error: %v", tl.Name(), input, err)
	}
	return out
}

var refRE = regexp.MustCompile(`^\{"kind":"work\.ref","id":"([0-9a-f]{32})","targetId":"[^"]*","guarantees":\{"execution":"process-local","rejoin":"process-local"\}\}$`)

// refID returns the id of a Ref JSON, failing the test when out is not one.
func refID(t *testing.T, out string) string {
	t.Helper()
	m := refRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("not a work.ref: %s", out)
	}
	return m[1]
}

// launch calls a backgroundable child with run_in_background and returns
// the Work id.
func launch(t *testing.T, s *middleware.Kit, label, input string) string {
	t.Helper()
	b, _ := json.Marshal(input)
	return refID(t, call(t, tool(t, s, label), `{"input":`+string(b)+`,"run_in_background":true}`))
}

// act calls the work tool with the JSON encoding of v.
func act(t *testing.T, s *middleware.Kit, v map[string]string) string {
	t.Helper()
	return actCtx(t, context.Background(), s, v)
}

func actCtx(t *testing.T, ctx context.Context, s *middleware.Kit, v map[string]string) string {
	t.Helper()
	b, _ := json.Marshal(v)
	return callCtx(t, ctx, tool(t, s, middleware.WorkToolName), string(b))
}

// subst replaces each id with its placeholder.
func subst(s string, ids map[string]string) string {
	for id, ph := range ids {
		s = strings.ReplaceAll(s, id, ph)
	}
	return s
}

// errorCode checks that out is exactly one error object with a non-empty
// message and returns its code.
func errorCode(t *testing.T, out string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var v struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := dec.Decode(&v); err != nil || dec.More() || v.Error == nil {
		t.Fatalf("not an error object: %s (%v)", out, err)
	}
	if v.Error.Code == "" || strings.TrimSpace(v.Error.Message) == "" {
		t.Fatalf("error object without code or message: %s", out)
	}
	return v.Error.Code
}

// gate is a child body that reports its start, then waits for release (or,
// when cooperative, for its context) and returns out or err.
type gate struct {
	started chan struct{}
	release chan struct{}
	once    sync.Once
	inputs  chan string
	// cooperative children return ctx's error when cancelled.
	cooperative bool
	out         string
	err         error
}

func newGate(out string, err error) *gate {
	return &gate{started: make(chan struct{}, 64), release: make(chan struct{}), inputs: make(chan string, 64), out: out, err: err}
}

func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

func (g *gate) run(ctx context.Context, input string) (string, error) {
	select {
	case g.inputs <- input:
	default:
	}
	select {
	case g.started <- struct{}{}:
	default:
	}
	if g.cooperative {
		select {
		case <-g.release:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	} else {
		<-g.release
	}
	return g.out, g.err
}

var errBoom = errors.New("boom")

// gate returns a gate that is opened when the test ends, before the
// engine is closed.
func (e *env) gate(out string, err error) *gate {
	g := newGate(out, err)
	e.t.Cleanup(g.open)
	return g
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
