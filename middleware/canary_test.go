package middleware_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestCanary: a unique string in a child's output, in its failure text (a
// returned error and a panic value) and in guidance never appears in any
// status, list, cancel, detach or send output, in the status block, or in
// anything the Observer records. Only result of the completed child, and
// the child's own guidance, carry it: that is the contract.
func TestCanary(t *testing.T) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	canary := "CANARY-" + hex.EncodeToString(b[:])

	e := newEnv(t)
	okGate := e.gate("output with "+canary, nil)
	failGate := e.gate("partial "+canary, errors.New("failure text "+canary))
	panicGate := e.gate("", nil)
	agentGate := e.gate("agent output "+canary, nil)
	guidance := make(chan string, 1)
	// clean collects every model-facing output that must not carry it.
	var clean []string
	add := func(s string) string { clean = append(clean, s); return s }

	s := e.prepare("coord", map[string]any{
		"ok":   middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: okGate.run}),
		"fail": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: failGate.run}),
		"panic": middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: func(ctx context.Context, in string) (string, error) {
			<-panicGate.release
			panic(fmt.Errorf("panic value %s", canary))
		}}),
		"agent": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: func(ctx context.Context, in string) (string, error) {
			<-agentGate.release
			guidance <- middleware.Guidance(ctx) // its model-request boundary
			return agentGate.out, nil
		}}),
		"fgfail":  middleware.Child{Kind: work.KindFunction, Run: func(context.Context, string) (string, error) { return canary, errors.New(canary) }},
		"fgpanic": middleware.Child{Kind: work.KindFunction, Run: func(context.Context, string) (string, error) { panic(canary) }},
		"fgok":    middleware.Child{Kind: work.KindFunction, Run: func(context.Context, string) (string, error) { return canary, nil }},
	})
	ids := map[string]string{}
	for _, label := range []string{"ok", "fail", "panic", "agent"} {
		ids[label] = launch(t, s, label, "task")
	}
	// Guidance carrying the canary, sent twice (idempotent) under one call id.
	ctx := middleware.WithCallID(context.Background(), "call-canary")
	send := map[string]string{"action": "send", "id": ids["agent"], "message": "guidance " + canary}
	add(actCtx(t, ctx, s, send))
	add(actCtx(t, ctx, s, send))
	add(actCtx(t, ctx, s, map[string]string{"action": "send", "id": ids["agent"], "message": "other " + canary})) // conflict
	add(s.StatusBlock(context.Background()))
	add(act(t, s, map[string]string{"action": "list"}))

	// Finish everything.
	okGate.open()
	failGate.open()
	panicGate.open()
	agentGate.open()
	if g := <-guidance; !strings.Contains(g, "guidance "+canary) {
		t.Fatalf("the child did not get its guidance: %q", g)
	}
	e.obs.wait(ids["ok"], observe.EventCompleted)
	e.obs.wait(ids["fail"], observe.EventFailed)
	e.obs.wait(ids["panic"], observe.EventFailed)
	e.obs.wait(ids["agent"], observe.EventCompleted)

	for _, label := range []string{"ok", "fail", "panic", "agent"} {
		id := ids[label]
		add(act(t, s, map[string]string{"action": "status", "id": id}))
		add(act(t, s, map[string]string{"action": "cancel", "id": id}))
		add(act(t, s, map[string]string{"action": "send", "id": id, "message": "late " + canary}))
		if label == "fail" || label == "panic" {
			add(act(t, s, map[string]string{"action": "result", "id": id}))
		}
	}
	add(act(t, s, map[string]string{"action": "list"}))
	add(s.StatusBlock(context.Background()))
	add(call(t, tool(t, s, "fgfail"), "x"))
	add(call(t, tool(t, s, "fgpanic"), "x"))

	// The contract: result of a completed child is its exact output.
	if got := act(t, s, map[string]string{"action": "result", "id": ids["ok"]}); got != "output with "+canary {
		t.Fatalf("result %q", got)
	}
	if got := call(t, tool(t, s, "fgok"), "x"); got != canary {
		t.Fatalf("foreground output %q", got)
	}
	add(s.StatusBlock(context.Background())) // after the result was read
	for _, label := range []string{"ok", "fail", "panic", "agent"} {
		add(act(t, s, map[string]string{"action": "detach", "id": ids[label]}))
	}

	for i, out := range clean {
		if strings.Contains(out, canary) || strings.Contains(out, canary[7:]) {
			t.Errorf("output %d carries the canary: %s", i, out)
		}
	}
	events, calls := e.obs.Events(), e.obs.Calls()
	if len(events) == 0 || len(calls) == 0 {
		t.Fatal("nothing recorded")
	}
	for _, ev := range events {
		if s := fmt.Sprintf("%+v", ev); strings.Contains(s, canary[7:]) {
			t.Errorf("event carries the canary: %s", s)
		}
	}
	for _, c := range calls {
		if s := fmt.Sprintf("%+v", c); strings.Contains(s, canary[7:]) {
			t.Errorf("call carries the canary: %s", s)
		}
	}
}
