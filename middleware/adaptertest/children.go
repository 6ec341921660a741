package adaptertest

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// kid is an agent child's scripted model driven by the test: each model
// request of the child waits for the test's reply.
type kid struct {
	v      *env
	name   string
	script *Script
	reqs   chan Request
	steps  chan Step
	quit   chan struct{}
	last   Request
	// seen records the context values the child's own tool saw.
	mu   sync.Mutex
	seen []any
}

// kid returns an agent child's driver; the child's own tool is "lookup".
func (v *env) kid(name string) *kid {
	k := &kid{v: v, name: name, reqs: make(chan Request), steps: make(chan Step), quit: make(chan struct{})}
	k.script = &Script{more: k.next}
	v.t.Cleanup(func() { close(k.quit) })
	return k
}

func (k *kid) next(req Request) Step {
	select {
	case k.reqs <- req:
	case <-k.quit:
		return Fail(fmt.Errorf("adaptertest: the test ended"))
	}
	select {
	case s := <-k.steps:
		return s
	case <-k.quit:
		return Fail(fmt.Errorf("adaptertest: the test ended"))
	}
}

// tool returns the agent child as a Tool named label.
func (k *kid) tool(label string, background bool) Tool {
	return Tool{Kind: Agent, Name: label, Description: "Researches a topic (" + label + ").", Background: background,
		Agent: &AgentSpec{
			Instruction: "CHILD-INSTRUCTION " + k.name,
			Model:       k.script,
			Tools: []Tool{{Kind: Plain, Name: "lookup", Description: "Looks a fact up.",
				Func: func(ctx context.Context, _ string) (string, error) {
					k.mu.Lock()
					k.seen = append(k.seen, ctx.Value(turnKey{}))
					k.mu.Unlock()
					return "LOOKUP-RESULT", nil
				}}},
		}}
}

// await waits for the child's next model request.
func (k *kid) await() Request {
	k.v.t.Helper()
	select {
	case k.last = <-k.reqs:
		return k.last
	case <-time.After(guard):
		k.v.t.Fatalf("%s: agent child %s made no model request within %v", k.v.s.a.Name, k.name, guard)
	}
	return Request{}
}

// reply answers the child's pending request.
func (k *kid) reply(s Step) {
	k.v.t.Helper()
	select {
	case k.steps <- s:
	case <-time.After(guard):
		k.v.t.Fatalf("agent child %s's model did not take its step", k.name)
	}
}

// lookup makes the child call its own tool.
func (k *kid) lookup() { k.reply(CallTool("", "lookup", map[string]string{"q": "x"})) }

// requests returns how many model requests the child made.
func (k *kid) requests() int { return len(k.script.Requests()) }

// gate is a function child's body, held until the test releases it.
type gate struct {
	v       *env
	started chan string
	release chan result
	quit    chan struct{}
	mu      sync.Mutex
	seen    []any
}

type result struct {
	out string
	err error
}

func (v *env) gate() *gate {
	g := &gate{v: v, started: make(chan string, 64), release: make(chan result, 64), quit: make(chan struct{})}
	v.t.Cleanup(func() { close(g.quit) })
	return g
}

func (g *gate) run(ctx context.Context, in string) (string, error) {
	g.mu.Lock()
	g.seen = append(g.seen, ctx.Value(turnKey{}))
	g.mu.Unlock()
	g.started <- in
	select {
	case r := <-g.release:
		return r.out, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	case <-g.quit:
		return "", fmt.Errorf("adaptertest: the test ended")
	}
}

// tool returns the function child as a Tool named label.
func (g *gate) tool(label string, background bool) Tool {
	return Tool{Kind: Function, Name: label, Description: "Fetches a page (" + label + ").", Background: background, Func: g.run}
}

// waitStarted waits for one run to start and returns its input.
func (g *gate) waitStarted() string {
	g.v.t.Helper()
	select {
	case in := <-g.started:
		return in
	case <-time.After(guard):
		g.v.t.Fatalf("%s: a function child did not start within %v", g.v.s.a.Name, guard)
	}
	return ""
}

// open lets one run return out, err.
func (g *gate) open(out string, err error) { g.release <- result{out, err} }

// constChild is a function child returning out at once.
func constChild(label string, background bool, out string) Tool {
	return Tool{Kind: Function, Name: label, Description: "Returns a constant.", Background: background,
		Func: func(context.Context, string) (string, error) { return out, nil }}
}

// plain is an ordinary tool.
func plain(name, out string) Tool {
	return Tool{Kind: Plain, Name: name, Description: "An ordinary tool (" + name + ").",
		Func: func(context.Context, string) (string, error) { return out, nil }}
}
