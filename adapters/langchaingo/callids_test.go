package langchaingo_test

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
)

// TestFunctionsCallIdentity: with the functions agent the model's tool-call
// id is each call's identity, and it reaches the Observer (a send's
// idempotency on it is the conformance suite's Send case).
func TestFunctionsCallIdentity(t *testing.T) {
	ctx := context.Background()
	rec := &enginetest.Recorder{}
	sup := work.New(work.WithObserver(rec))
	defer closeSup(t, sup)
	child := lc.NewFunction("child", "A child.", func(context.Context, string) (string, error) { return "child done", nil })
	log := &toolLog{}
	m := scripted.New(
		scripted.ToolCalls(scripted.Call{ID: "tc-launch", Name: "child", Arguments: `{"input":"go","run_in_background":true}`}),
		scripted.Func(func(scripted.Request) scripted.Step {
			id := refID(log.outputs("child")[0], "child")
			return scripted.ToolCalls(scripted.Call{ID: "tc-result", Name: "work", Arguments: js(map[string]string{"action": "result", "id": id, "timeout": "10s"})})
		}),
		scripted.ToolCall("work", `{"action":"list"}`),
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
	if outs := log.outputs("work"); len(outs) != 2 || outs[0] != "child done" {
		t.Fatalf("work outputs = %q", outs)
	}
	var ids []string
	for _, c := range rec.Calls() {
		ids = append(ids, c.Call.CallID)
	}
	if want := []string{"tc-launch", "tc-result", "call_3_1"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("call ids = %q, want %q", ids, want)
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
