package adaptertest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwork/agentwork/internal/fakeclock"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

// guard bounds every wait on something the suite controls: it turns a hang
// into a failure and never sequences anything.
const guard = 20 * time.Second

// t0 is the fake clock's start: 2026-01-02T03:04:05.000Z.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// iso is t0+d as the JSON contract writes it.
func iso(d time.Duration) string { return t0.Add(d).UTC().Format("2006-01-02T15:04:05.000Z") }

// observer records events and lets a test wait for one without polling.
type observer struct {
	enginetest.Recorder
	mu   sync.Mutex
	cond sync.Cond
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

// env is one case's engine (an in-process engine on a fake clock, no
// per-Work deadline, so the only timers are result waits) with a recording
// observer.
type env struct {
	t     *testing.T
	s     *suite
	sup   *work.Engine
	clock *fakeclock.Clock
	obs   *observer
}

var ownerSeq atomic.Int64

func (s *suite) env(t *testing.T, opts ...work.Option) *env {
	t.Helper()
	v := &env{t: t, s: s, clock: fakeclock.New(t0), obs: &observer{}}
	v.obs.cond.L = &v.obs.mu
	base := []work.Option{work.WithClock(v.clock), work.WithObserver(v.obs), work.WithDefaultBudget(work.Budget{MaxDuration: -1})}
	v.sup = work.New(append(base, opts...)...)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		if err := v.sup.Close(ctx); err != nil {
			t.Errorf("Engine.Close: %v", err)
		}
		v.checkContentFree()
	})
	return v
}

// contentCanaries are the suite's child outputs, failure text, guidance,
// prompts and inputs: none may reach the Observer (telemetry).
var contentCanaries = []string{"EXACT-OUTPUT", "FAILURE-CANARY", "GUIDE-ONE-CANARY", "GUIDE-TWO-CANARY",
	"COORDINATOR-INSTRUCTION", "CHILD-INSTRUCTION", "COORDINATOR-TASK", "TOPIC-", "LOOKUP-RESULT", "BIG-OUTPUT"}

// checkContentFree checks every event and call the engine and the adapter
// reported.
func (v *env) checkContentFree() {
	seen := fmt.Sprintf("%+v %+v", v.obs.Events(), v.obs.Calls())
	for _, c := range contentCanaries {
		if strings.Contains(seen, c) {
			v.t.Errorf("%s: content %q reached the Observer", v.s.a.Name, c)
		}
	}
}

// wait blocks until the Work id has had an event of type typ.
func (v *env) wait(id string, typ observe.EventType) {
	v.t.Helper()
	v.waitAny(id, typ)
}

// waitAny blocks until the Work id has had an event of one of types and
// returns the first of types it had.
func (v *env) waitAny(id string, types ...observe.EventType) observe.EventType {
	v.t.Helper()
	got := make(chan observe.EventType, 1)
	go func() {
		v.obs.mu.Lock()
		defer v.obs.mu.Unlock()
		for {
			for _, typ := range types {
				if v.obs.has(id, typ) {
					got <- typ
					return
				}
			}
			v.obs.cond.Wait()
		}
	}()
	select {
	case typ := <-got:
		return typ
	case <-time.After(guard):
		v.t.Fatalf("Work %s had no %v event within %v", id, types, guard)
	}
	return ""
}

// cfg returns a Config for a fresh owner named after name.
func (v *env) cfg(name string, model *Script, tools ...Tool) Config {
	return Config{
		Engine:        v.sup,
		Owner:         name + "-" + strconv.FormatInt(ownerSeq.Add(1), 10),
		Instruction:   "COORDINATOR-INSTRUCTION " + name,
		Model:         model,
		Tools:         tools,
		MaxIterations: 128,
	}
}

// coordinator builds a coordinator that must prepare, released when the
// test ends.
func (v *env) coordinator(cfg Config) Coordinator {
	v.t.Helper()
	c, err := v.s.a.NewCoordinator(v.t, cfg)
	if err != nil {
		v.t.Fatalf("%s: NewCoordinator(%s): %v", v.s.a.Name, cfg.Owner, err)
	}
	if c == nil {
		v.t.Fatalf("%s: NewCoordinator returned nil", v.s.a.Name)
	}
	v.t.Cleanup(func() { _ = c.Release() })
	return c
}

// turnKey is a value on the coordinator's run context that no child may
// see.
type turnKey struct{}

// puppet is a coordinator driven step by step by the test: it runs one
// turn in a goroutine, and each of its model requests waits for the test
// to decide the reply.
type puppet struct {
	v      *env
	script *Script
	c      Coordinator
	reqs   chan Request
	steps  chan Step
	done   chan struct{}
	out    string
	err    error
	last   Request // the request being answered
	n      int     // call ids issued
	ended  bool
}

// newPuppet returns an undriven puppet over a fresh Script (build the
// Coordinator with p.script, then start it).
func (v *env) newPuppet() *puppet {
	p := &puppet{v: v, reqs: make(chan Request), steps: make(chan Step), done: make(chan struct{})}
	p.script = &Script{more: p.next}
	return p
}

// puppetOf builds a coordinator named name with tools over a puppet and
// starts its turn; the first request has arrived when it returns.
func (v *env) puppetOf(name string, tools ...Tool) *puppet {
	v.t.Helper()
	p := v.newPuppet()
	p.start(v.coordinator(v.cfg(name, p.script, tools...)))
	return p
}

func (p *puppet) next(req Request) Step {
	select {
	case p.reqs <- req:
	case <-time.After(guard):
		return Fail(fmt.Errorf("adaptertest: the test did not take request %d", req.Index))
	}
	select {
	case s := <-p.steps:
		return s
	case <-time.After(guard):
		return Fail(fmt.Errorf("adaptertest: the test did not answer request %d", req.Index))
	}
}

// start runs the turn and waits for its first request.
func (p *puppet) start(c Coordinator) {
	p.v.t.Helper()
	p.c = c
	ctx := context.WithValue(context.Background(), turnKey{}, "COORDINATOR-CONTEXT-VALUE")
	go func() {
		defer close(p.done)
		p.out, p.err = c.Run(ctx, "COORDINATOR-TASK: do the work")
	}()
	p.v.t.Cleanup(func() {
		// End the turn: answer whatever request is pending with a final
		// answer (a failed test may leave one unread).
		timeout := time.After(guard)
		for !p.ended {
			select {
			case <-p.reqs:
			case p.steps <- Text("cleanup"):
			case <-p.done:
				p.ended = true
			case <-timeout:
				p.v.t.Errorf("%s: the coordinator's turn did not end", p.v.s.a.Name)
				return
			}
		}
	})
	p.await()
}

// await waits for the next request and returns it; the turn must not end.
func (p *puppet) await() Request {
	p.v.t.Helper()
	select {
	case p.last = <-p.reqs:
		return p.last
	case <-p.done:
		p.ended = true
		p.v.t.Fatalf("%s: the coordinator's run ended instead of making its next model request: %q, %v", p.v.s.a.Name, p.out, p.err)
	case <-time.After(guard):
		p.v.t.Fatalf("%s: no coordinator model request within %v", p.v.s.a.Name, guard)
	}
	return Request{}
}

// send replies to the pending request with calls (without waiting for the
// next request); it returns their ids.
func (p *puppet) send(calls ...Call) []string {
	p.v.t.Helper()
	ids := make([]string, len(calls))
	for i := range calls {
		if calls[i].ID == "" {
			p.n++
			calls[i].ID = "tc-" + strconv.Itoa(p.n)
		}
		ids[i] = calls[i].ID
	}
	select {
	case p.steps <- Calls(calls...):
	case <-time.After(guard):
		p.v.t.Fatal("the coordinator's model did not take its step")
	}
	return ids
}

// results replies with calls and returns their results, from the next
// request's tool messages.
func (p *puppet) results(calls ...Call) []string {
	p.v.t.Helper()
	ids := p.send(calls...)
	return p.collect(ids...)
}

// collect waits for the next request and returns the results of ids.
func (p *puppet) collect(ids ...string) []string {
	p.v.t.Helper()
	req := p.await()
	out := make([]string, len(ids))
	for i, id := range ids {
		r, ok := req.Result(id)
		if !ok {
			p.v.t.Fatalf("%s: request %d has no tool message for call %s (did the agent run it?): %+v", p.v.s.a.Name, req.Index, id, req.Messages)
		}
		out[i] = r
	}
	return out
}

// call calls tool with args (a JSON object, or a string sent as it is) and
// returns its result.
func (p *puppet) call(tool string, args any) string {
	p.v.t.Helper()
	return p.results(Call{Name: tool, Arguments: argJSON(args)})[0]
}

// work calls the work tool with the given fields.
func (p *puppet) work(fields ...string) string {
	p.v.t.Helper()
	return p.call("work", obj(fields...))
}

// finish answers with text and checks that the turn returns it.
func (p *puppet) finish() {
	p.v.t.Helper()
	select {
	case p.steps <- Text("FINAL-ANSWER"):
	case <-time.After(guard):
		p.v.t.Fatal("the coordinator's model did not take its final step")
	}
	select {
	case <-p.done:
	case <-time.After(guard):
		p.v.t.Fatalf("%s: the turn did not end after the final answer", p.v.s.a.Name)
	}
	p.ended = true
	if p.err != nil || p.out != "FINAL-ANSWER" {
		p.v.t.Fatalf("%s: the turn ended with %q, %v; want the final answer (a tool must never abort the agent)", p.v.s.a.Name, p.out, p.err)
	}
}

// obj builds a JSON object of string fields: key, value, key, value...
func obj(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// bg is a child's background launch input.
func bg(input string) map[string]any {
	return map[string]any{"input": input, "run_in_background": true}
}

// decode decodes a JSON object reply.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not a JSON object: %q", s)
	}
	return m
}
