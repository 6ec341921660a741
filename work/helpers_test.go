package work_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agentwork/agentwork/internal/fakeclock"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

// t0 is the fake clock's start: a time with milliseconds, so that the JSON
// goldens show the precision.
var t0 = time.Date(2026, 3, 4, 5, 6, 7, 891_000_000, time.UTC)

var (
	agent = work.Target{Label: "research", Kind: work.KindAgent}
	fn    = work.Target{Label: "fetch", Kind: work.KindFunction}
)

// obs is the test Observer: a enginetest.Recorder plus a condition variable so a
// test can wait for an event without polling.
type obs struct {
	rec    enginetest.Recorder
	mu     sync.Mutex
	cond   sync.Cond
	byWork map[string][]observe.Event
	all    []observe.Event
}

func newObs() *obs {
	o := &obs{byWork: make(map[string][]observe.Event)}
	o.cond.L = &o.mu
	return o
}

func (o *obs) Begin(ctx context.Context, c observe.ToolCall) (context.Context, func(observe.ToolCallEnd)) {
	return o.rec.Begin(ctx, c)
}

func (o *obs) Bind(caller, exec context.Context, e observe.Event) context.Context {
	return o.rec.Bind(caller, exec, e)
}

func (o *obs) Event(ctx context.Context, e observe.Event) {
	o.rec.Event(ctx, e)
	o.mu.Lock()
	o.all = append(o.all, e)
	if e.WorkID != "" {
		o.byWork[e.WorkID] = append(o.byWork[e.WorkID], e)
	}
	o.cond.Broadcast()
	o.mu.Unlock()
}

// wait blocks until pred holds for the events of id, and returns them.
func (o *obs) wait(id string, pred func([]observe.Event) bool) []observe.Event {
	o.mu.Lock()
	defer o.mu.Unlock()
	for !pred(o.byWork[id]) {
		o.cond.Wait()
	}
	return append([]observe.Event(nil), o.byWork[id]...)
}

// waitCount waits until id has at least n events or d passes (a real-time
// timer wakes the wait; nothing polls), and returns its events.
func (o *obs) waitCount(id string, n int, d time.Duration) []observe.Event {
	expired := false
	t := time.AfterFunc(d, func() {
		o.mu.Lock()
		expired = true
		o.cond.Broadcast()
		o.mu.Unlock()
	})
	defer t.Stop()
	o.mu.Lock()
	defer o.mu.Unlock()
	for len(o.byWork[id]) < n && !expired {
		o.cond.Wait()
	}
	return append([]observe.Event(nil), o.byWork[id]...)
}

// waitTerminal blocks until id has a terminal event and returns that event.
func (o *obs) waitTerminal(id string) observe.Event {
	evs := o.wait(id, func(evs []observe.Event) bool { return terminalIndex(evs) >= 0 })
	return evs[terminalIndex(evs)]
}

func terminalIndex(evs []observe.Event) int {
	for i, e := range evs {
		if e.To.Terminal() {
			return i
		}
	}
	return -1
}

func (o *obs) events(id string) []observe.Event {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]observe.Event(nil), o.byWork[id]...)
}

func (o *obs) count(typ observe.EventType) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, e := range o.all {
		if e.Type == typ {
			n++
		}
	}
	return n
}

func (o *obs) ofType(typ observe.EventType) []observe.Event {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []observe.Event
	for _, e := range o.all {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// harness is an engine on a fake clock with the test Observer. Its
// cleanup releases every child still blocked and closes the engine.
type harness struct {
	t        *testing.T
	s        *work.Engine
	clk      *fakeclock.Clock
	obs      *obs
	kill     chan struct{}
	reclaims chan struct{} // a signal each time a Work starts waiting to reclaim its slot
}

func newHarness(t *testing.T, opts ...work.Option) *harness {
	t.Helper()
	h := &harness{t: t, clk: fakeclock.New(t0), obs: newObs(), kill: make(chan struct{})}
	h.s = work.New(append([]work.Option{work.WithClock(h.clk), work.WithObserver(h.obs)}, opts...)...)
	h.reclaims = make(chan struct{}, 64)
	h.s.SetReclaimHookForTest(func() {
		select {
		case h.reclaims <- struct{}{}:
		default:
		}
	})
	t.Cleanup(func() {
		close(h.kill)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h
}

// child is a controlled child: it blocks until the test tells it how to
// end (or the harness is cleaned up).
type child struct {
	h       *harness
	started chan struct{}
	ctl     chan func(context.Context) (string, error)
	ctx     context.Context
	ex      *work.Execution
}

func (h *harness) child() *child {
	return &child{h: h, started: make(chan struct{}), ctl: make(chan func(context.Context) (string, error))}
}

func (c *child) run(ctx context.Context) (string, error) {
	c.ctx = ctx
	c.ex, _ = work.ExecutionFrom(ctx)
	close(c.started)
	select {
	case f := <-c.ctl:
		return f(ctx)
	case <-c.h.kill:
		return "", ctx.Err()
	}
}

// do hands the child its ending; it returns once the child has taken it.
func (c *child) do(f func(context.Context) (string, error)) { c.ctl <- f }

func (c *child) complete(out string) { c.do(func(context.Context) (string, error) { return out, nil }) }
func (c *child) fail()               { c.do(func(context.Context) (string, error) { return "", errBoom }) }
func (c *child) panics()             { c.do(func(context.Context) (string, error) { panic("boom " + canary) }) }
func (c *child) returnCtxErr() {
	c.do(func(ctx context.Context) (string, error) { <-ctx.Done(); return "", ctx.Err() })
}

var errBoom = errors.New("boom " + canary)

// canary is content that must never reach an event, status or error.
const canary = "CANARY-7f3a9c"

func (h *harness) start(o work.Owner, target work.Target, c *child) work.Ref {
	h.t.Helper()
	ref, err := h.s.Start(context.Background(), work.Spec{Owner: o, Target: target, Run: c.run})
	if err != nil {
		h.t.Fatalf("Start: %v", err)
	}
	return ref
}

// running starts a controlled child and waits until it runs.
func (h *harness) running(o work.Owner, target work.Target) (work.Ref, *child) {
	h.t.Helper()
	c := h.child()
	ref := h.start(o, target, c)
	<-c.started
	return ref, c
}

func (h *harness) status(o work.Owner, id string) work.Status {
	h.t.Helper()
	st, err := h.s.Status(context.Background(), o, id)
	if err != nil {
		h.t.Fatalf("Status: %v", err)
	}
	return st
}

// census returns the engine's counts per state, summed over targets.
func census(s *work.Engine) map[observe.State]int {
	m := make(map[observe.State]int)
	s.CensusForTest(func(_ string, st observe.State, n int) {
		if n != 0 {
			m[st] += n
		}
	})
	return m
}

func censusTotal(s *work.Engine) int {
	n := 0
	for _, v := range census(s) {
		n += v
	}
	return n
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var we *work.Error
	if !errors.As(err, &we) {
		t.Fatalf("error %v (%T) is not a *work.Error", err, err)
	}
	if we.Code != code {
		t.Fatalf("code = %q, want %q (%v)", we.Code, code, err)
	}
}

// immediate returns a run function that returns out at once.
func immediate(out string) work.RunFunc {
	return func(context.Context) (string, error) { return out, nil }
}
