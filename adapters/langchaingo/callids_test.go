package langchaingo_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
)

// TestFunctionsCallIdentity: with the functions agent the model's tool-call
// id is the call's identity, so a replayed send (same id, same text)
// returns the first receipt and queues nothing; the same id with other text
// is a conflict.
func TestFunctionsCallIdentity(t *testing.T) {
	ctx := context.Background()
	rec := &enginetest.Recorder{}
	sup := work.New(work.WithObserver(rec))
	defer closeSup(t, sup)

	in, gate := make(chan struct{}), make(chan struct{})
	wait := funcTool{name: "wait", desc: "Waits.", fn: func(ctx context.Context, _ string) (string, error) {
		close(in)
		select {
		case <-gate:
		case <-ctx.Done():
		}
		return "waited", nil
	}}
	childModel := scripted.New(scripted.FunctionsCall("wait", "x"), scripted.Text("child done"))
	child := lc.FromExecutor("child", "A child.", agents.NewExecutor(agents.NewOpenAIFunctionsAgent(childModel, []tools.Tool{wait})))

	log := &toolLog{}
	var id string
	send := func(callID, msg string) scripted.Step {
		return scripted.ToolCalls(scripted.Call{ID: callID, Name: "work", Arguments: js(map[string]string{"action": "send", "id": id, "message": msg})})
	}
	m := scripted.New(
		scripted.ToolCalls(scripted.Call{ID: "tc-launch", Name: "child", Arguments: `{"input":"go","run_in_background":true}`}),
		scripted.Func(func(scripted.Request) scripted.Step {
			id = refID(log.outputs("child")[0], "child")
			recv(t, in, "the child's tool")
			return send("tc-send", "steer once")
		}),
		scripted.Func(func(scripted.Request) scripted.Step { return send("tc-send", "steer once") }),     // replayed
		scripted.Func(func(scripted.Request) scripted.Step { return send("tc-send", "something else") }), // conflict
		scripted.Func(func(scripted.Request) scripted.Step {
			close(gate)
			return scripted.ToolCall("work", js(map[string]string{"action": "result", "id": id, "timeout": "10s"}))
		}),
		scripted.Text("done"),
	)
	kit, err := lc.Prepare(ctx, sup, m, []tools.Tool{lc.Backgroundable(child)}, lc.WithOwner("fn-owner"))
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	if _, err := chains.Run(ctx, agents.NewExecutor(agents.NewOpenAIFunctionsAgent(kit.Model(), log.wrap(kit.Tools())), agents.WithMaxIterations(8)), "go"); err != nil {
		t.Fatal(err)
	}
	sends := log.outputs("work")
	if len(sends) != 4 {
		t.Fatalf("work outputs = %q", sends)
	}
	if sends[0] != sends[1] || decode(t, sends[0])["cursor"] != "1" {
		t.Errorf("replayed send: %s then %s, want the same receipt", sends[0], sends[1])
	}
	if code := decode(t, sends[2])["error"].(map[string]any)["code"]; code != "conflict" {
		t.Errorf("same id, other text = %s, want conflict", sends[2])
	}
	if sends[3] != "child done" {
		t.Errorf("result = %q", sends[3])
	}
	// The child got the guidance once.
	if got := childModel.Requests()[1].LastMessage().Text(); !strings.HasSuffix(got, "\n1. steer once") || strings.Contains(got, "2.") {
		t.Errorf("child's guidance = %q, want one message", got)
	}
	var ids []string
	for _, c := range rec.Calls() {
		ids = append(ids, c.Call.CallID)
	}
	if want := []string{"tc-launch", "tc-send", "tc-send", "tc-send", "call_5_1"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("call ids = %q, want %q", ids, want)
	}

	// The prepared (middleware) work tool is idempotent on the identity in
	// its context.
	var raw middleware.Tool
	for _, x := range kit.Set().Tools() {
		if x.Name() == "work" {
			raw = x
		}
	}
	cctx := middleware.WithCallID(ctx, "direct-1")
	msg := js(map[string]string{"action": "send", "id": id, "message": "late"})
	a, _ := raw.Call(cctx, msg)
	b, _ := raw.Call(cctx, msg)
	if a != b {
		t.Errorf("send with the same call id: %s then %s", a, b)
	}
}

// TestTextAgentCallIdentity: the text agents have no provider-issued
// tool-call ids, so their calls carry none (none is made up). Two Kits with
// the same owner, and two executors on one Kit, launching the same child
// with the same input get Works of their own: a made-up id (a per-Kit step
// counter) would make the second launch replay the first.
func TestTextAgentCallIdentity(t *testing.T) {
	for _, name := range []string{"OneShot", "Conversational"} {
		t.Run(name, func(t *testing.T) {
			k := kindNamed(name)
			ctx := context.Background()
			rec := &enginetest.Recorder{}
			sup := work.New(work.WithObserver(rec))
			defer closeSup(t, sup)
			job := lc.NewFunction("job", "A job.", func(context.Context, string) (string, error) { return "ok", nil })
			script := []scripted.Step{
				k.call("job", `{"input":"a","run_in_background":true}`),
				k.call("work", `{"action":"list"}`),
				k.call("job", `{"input":"b"}`),
				k.final("done"),
			}
			var launched []string
			run := func(kit *lc.Kit) {
				t.Helper()
				log := &toolLog{}
				if _, err := chains.Run(ctx, agents.NewExecutor(k.agent(kit.Model(), log.wrap(kit.Tools()), "")), "go"); err != nil {
					t.Fatal(err)
				}
				outs := log.outputs("job")
				if len(outs) != 2 || refID(outs[0], "job") == "" || outs[1] != "ok" {
					t.Fatalf("job outputs = %q", outs)
				}
				launched = append(launched, refID(outs[0], "job"))
			}
			// Two Kits with the same owner, one after the other.
			for range 2 {
				kit, err := lc.Prepare(ctx, sup, scripted.New(script...), []tools.Tool{lc.Backgroundable(job)}, lc.WithOwner("text-owner"))
				if err != nil {
					t.Fatal(err)
				}
				run(kit)
				if err := kit.Release(); err != nil {
					t.Fatal(err)
				}
			}
			// Two executors on one Kit (its model answers both scripts in turn).
			kit, err := lc.Prepare(ctx, sup, scripted.New(append(slices.Clone(script), script...)...),
				[]tools.Tool{lc.Backgroundable(job)}, lc.WithOwner("shared"))
			if err != nil {
				t.Fatal(err)
			}
			defer kit.Release()
			run(kit)
			run(kit)
			if launched[0] == launched[1] || launched[2] == launched[3] {
				t.Fatalf("a launch replayed another's Work: %q", launched)
			}
			for _, c := range rec.Calls() {
				if c.Call.CallID != "" {
					t.Fatalf("a text agent's call has the made-up identity %q", c.Call.CallID)
				}
			}
		})
	}
}
