package langchaingo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
	"github.com/tmc/langchaingo/memory"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/internal/fakeclock"
	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

const arg1Schema = `{"type":"object","properties":{"__arg1":{"title":"__arg1","type":"string"}},"required":["__arg1"]}`

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("not JSON: %s", a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	return reflect.DeepEqual(x, y)
}

type schemer interface{ Schema() map[string]any }

// TestFunctionsAgentSchemas: an OpenAIFunctionsAgent built on a Kit offers
// real JSON schemas for the work tool and the prepared children, in
// Functions and in Tools, while ordinary tools keep langchaingo's __arg1.
func TestFunctionsAgentSchemas(t *testing.T) {
	ctx := context.Background()
	sup := work.New()
	defer closeSup(t, sup)
	research := lc.FromExecutor("research", "Researches a topic.",
		agents.NewExecutor(agents.NewOpenAIFunctionsAgent(scripted.New(), nil)))
	render := lc.NewFunction("render", "Renders a report.", func(context.Context, string) (string, error) { return "", nil },
		lc.WithSchema(map[string]any{"type": "object", "properties": map[string]any{"title": map[string]any{"type": "string"}}, "required": []any{"title"}}))
	summarize := lc.NewFunction("summarize", "Summarizes text.", func(context.Context, string) (string, error) { return "", nil })

	m := scripted.New(scripted.Text("done"))
	kit, err := lc.Prepare(ctx, sup, m, []tools.Tool{constTool("lookup", "x"), lc.Backgroundable(research), lc.Backgroundable(render), summarize})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	out, err := chains.Run(ctx, agents.NewExecutor(agents.NewOpenAIFunctionsAgent(kit.Model(), kit.Tools())), "go")
	if err != nil || out != "done" {
		t.Fatalf("run = %q, %v", out, err)
	}
	req := m.Requests()[0]
	wantNames := []string{"lookup", "research", "render", "summarize", "work"} // the caller's order, work last
	if len(req.Functions) != len(wantNames) || len(req.Tools) != len(wantNames) {
		t.Fatalf("functions %d, tools %d; want %d each", len(req.Functions), len(req.Tools), len(wantNames))
	}
	for i, name := range wantNames {
		fn, tl := req.Functions[i], req.Tools[i]
		if fn.Name != name || tl.Name != name || tl.Type != "function" {
			t.Errorf("definition %d = %s / %s (%s), want %s", i, fn.Name, tl.Name, tl.Type, name)
		}
		if !jsonEqual(t, fn.Parameters, tl.Parameters) || fn.Description != tl.Description {
			t.Errorf("%s: Functions and Tools differ: %s vs %s", name, fn.Parameters, tl.Parameters)
		}
		if name == "lookup" {
			if !jsonEqual(t, fn.Parameters, []byte(arg1Schema)) {
				t.Errorf("ordinary tool schema = %s, want __arg1", fn.Parameters)
			}
			continue
		}
		want, _ := json.Marshal(toolNamed(t, kit.Tools(), name).(schemer).Schema())
		if !jsonEqual(t, fn.Parameters, want) {
			t.Errorf("%s schema = %s, want %s", name, fn.Parameters, want)
		}
		var s struct {
			Properties map[string]struct{ Type string } `json:"properties"`
		}
		_ = json.Unmarshal(fn.Parameters, &s)
		_, hasArg1 := s.Properties["__arg1"]
		bg, hasBG := s.Properties["run_in_background"]
		switch name {
		case "research", "render":
			if !hasBG || bg.Type != "boolean" {
				t.Errorf("%s: run_in_background not visible: %s", name, fn.Parameters)
			}
		default:
			if hasBG {
				t.Errorf("%s offers run_in_background: %s", name, fn.Parameters)
			}
		}
		if hasArg1 {
			t.Errorf("%s schema has __arg1: %s", name, fn.Parameters)
		}
	}
	if p := req.Functions[2].Parameters; !strings.Contains(string(p), `"title"`) {
		t.Errorf("render schema lost its declared field: %s", p)
	}
}

// TestTextAgentDescriptions: the text agents see no schema, only
// descriptions; a prepared child's description spells out its input
// object, so the model can write run_in_background in "Action Input:".
func TestTextAgentDescriptions(t *testing.T) {
	ctx := context.Background()
	sup := work.New()
	defer closeSup(t, sup)
	job := lc.NewFunction("job", "Runs a job.", func(context.Context, string) (string, error) { return "", nil })
	fg := lc.NewFunction("fg", "Foreground only.", func(context.Context, string) (string, error) { return "", nil },
		lc.WithSchema(map[string]any{"type": "object", "properties": map[string]any{"b": map[string]any{"type": "integer"}, "a": map[string]any{"type": "string"}}, "required": []any{"b"}}))
	m := scripted.New(scripted.ReActFinal("done"))
	kit, err := lc.Prepare(ctx, sup, m, []tools.Tool{lc.Backgroundable(job), fg, constTool("plain", "")})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	if _, err := chains.Run(ctx, agents.NewExecutor(agents.NewOneShotAgent(kit.Model(), kit.Tools())), "go"); err != nil {
		t.Fatal(err)
	}
	text := m.Requests()[0].Text()
	for _, want := range []string{
		`- job: Runs a job. Set "run_in_background": true to start it in the background and get a work.ref at once; then use the work tool. Input: a JSON object {"input": string (required), "run_in_background": boolean}.`,
		`- fg: Foreground only. Input: a JSON object {"b": integer (required), "a": string}.`,
		"- plain: Returns a constant.\n",
		`- work: Follow and control work you started`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("prompt lacks %q:\n%s", want, text)
		}
	}
}

// TestFunctionsCallIdentity: with the functions agent the model's tool-call
// id is the call's identity, so a replayed send (same id, same text)
// returns the first receipt and queues nothing; the same id with other text
// is a conflict.
func TestFunctionsCallIdentity(t *testing.T) {
	ctx := context.Background()
	rec := &work.Recorder{}
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
			rec := &work.Recorder{}
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
				defer kit.Release()
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

// TestToolsNeverReturnGoErrors: bad input, a launch refused by a limit and
// a failing or panicking foreground child come back as the error object,
// never as a Go error, so an executor running them is never aborted.
func TestToolsNeverReturnGoErrors(t *testing.T) {
	ctx := context.Background()
	sup := work.New(work.WithMaxStarts(1))
	defer closeSup(t, sup)
	ok := lc.NewFunction("ok_job", "Succeeds.", func(context.Context, string) (string, error) { return "fine", nil })
	failing := lc.NewFunction("failing", "Fails.", func(context.Context, string) (string, error) {
		return "", errors.New("SECRET failure text")
	})
	panicking := lc.NewFunction("panicking", "Panics.", func(context.Context, string) (string, error) { panic("SECRET panic") })
	typed := lc.NewFunction("typed", "Typed input.", func(context.Context, string) (string, error) { return "", nil },
		lc.WithSchema(map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}, "required": []any{"n"}}),
		lc.WithValidate(func(string) error { return errors.New("n is out of range") }))
	kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{lc.Backgroundable(ok), failing, panicking, lc.Backgroundable(typed)})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	ts := kit.Tools()
	if out := callOK(t, ctx, toolNamed(t, ts, "ok_job"), `{"input":"x","run_in_background":true}`); refID(out, "ok_job") == "" {
		t.Fatalf("first launch = %s", out)
	}
	tests := []struct {
		name, tool, input, code string
	}{
		{"work not JSON", "work", "list please", "invalid_input"},
		{"work no action", "work", `{}`, "missing_action"},
		{"work unknown action", "work", `{"action":"explode"}`, "unknown_action"},
		{"work no id", "work", `{"action":"status"}`, "missing_id"},
		{"work bad timeout", "work", `{"action":"result","id":"x","timeout":"soon"}`, "invalid_timeout"},
		{"work empty message", "work", `{"action":"send","id":"x","message":" "}`, "missing_message"},
		{"work unknown field", "work", `{"action":"list","verbose":true}`, "invalid_input"},
		{"child bad flag", "ok_job", `{"input":"x","run_in_background":"yes"}`, "invalid_child_input"},
		{"child wrong type", "ok_job", `{"input":3}`, "invalid_child_input"},
		{"child missing field", "typed", `{"run_in_background":true}`, "invalid_child_input"},
		{"child not an object", "typed", `hello`, "invalid_child_input"},
		{"child validation", "typed", `{"n":1,"run_in_background":true}`, "invalid_child_input"},
		{"foreground only", "failing", `{"input":"x","run_in_background":true}`, "invalid_child_input"},
		{"launch refused by a limit", "ok_job", `{"input":"y","run_in_background":true}`, "limit_exceeded"},
		{"failing child", "failing", `{"input":"x"}`, "child_failed"},
		{"panicking child", "panicking", "x", "child_failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := callOK(t, ctx, toolNamed(t, ts, tt.tool), tt.input)
			var e struct {
				Error middleware.ErrorObject `json:"error"`
			}
			if err := json.Unmarshal([]byte(out), &e); err != nil || e.Error.Code != tt.code || e.Error.Message == "" {
				t.Errorf("%s(%s) = %s, want error code %s", tt.tool, tt.input, out, tt.code)
			}
			if strings.Contains(out, "SECRET") {
				t.Errorf("error object leaks the child's failure: %s", out)
			}
		})
	}

	// In an executor: the run goes on after each of them.
	m := scripted.New(
		scripted.ReActCall("work", "list please"),
		scripted.ReActCall("failing", "x"),
		scripted.ReActCall("panicking", "x"),
		scripted.ReActCall("ok_job", `{"input":"z","run_in_background":true}`),
		scripted.ReActFinal("still here"),
	)
	kit2, err := lc.Prepare(ctx, sup, m, []tools.Tool{lc.Backgroundable(ok), failing, panicking}, lc.WithOwner("second"))
	if err != nil {
		t.Fatal(err)
	}
	defer kit2.Release()
	// The second owner has its own starts budget (1): use it up first so
	// the scripted launch is refused.
	callOK(t, ctx, toolNamed(t, kit2.Tools(), "ok_job"), `{"input":"w","run_in_background":true}`)
	out, err := chains.Run(ctx, agents.NewExecutor(agents.NewOneShotAgent(kit2.Model(), kit2.Tools()), agents.WithMaxIterations(6)), "go")
	if err != nil || out != "still here" {
		t.Fatalf("run = %q, %v; want it to finish", out, err)
	}
	if text := m.Requests()[4].Text(); strings.Count(text, `Observation: {"error":{"code":`) != 4 {
		t.Errorf("the model did not see four error objects:\n%s", text)
	}
}

// TestChildIterationsBounded: a child executor without its own iteration
// bound gets DefaultChildIterations; with langchaingo's default (5) it
// keeps it; a child that never finishes ends failed, not hung.
func TestChildIterationsBounded(t *testing.T) {
	tests := []struct {
		name  string
		exec  func(agents.Agent) *agents.Executor
		turns int
	}{
		{"unset", func(a agents.Agent) *agents.Executor { return &agents.Executor{Agent: a} }, lc.DefaultChildIterations},
		{"zero", func(a agents.Agent) *agents.Executor { return agents.NewExecutor(a, agents.WithMaxIterations(0)) }, lc.DefaultChildIterations},
		{"langchaingo default", func(a agents.Agent) *agents.Executor { return agents.NewExecutor(a) }, 5},
		{"explicit", func(a agents.Agent) *agents.Executor { return agents.NewExecutor(a, agents.WithMaxIterations(3)) }, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			sup := work.New()
			defer closeSup(t, sup)
			steps := make([]scripted.Step, 3*lc.DefaultChildIterations)
			for i := range steps {
				steps[i] = scripted.ReActCall("noop", "again")
			}
			s := &spy{inner: scripted.New(steps...)}
			loop := lc.FromExecutor("loop", "Never finishes.", tt.exec(agents.NewOneShotAgent(s, []tools.Tool{constTool("noop", "nothing")})))
			kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{lc.Backgroundable(loop)})
			if err != nil {
				t.Fatal(err)
			}
			defer kit.Release()
			id := refID(callOK(t, ctx, toolNamed(t, kit.Tools(), "loop"), `{"input":"go","run_in_background":true}`), "loop")
			if st := awaitState(t, sup, kit.Owner(), id); st != work.StateFailed {
				t.Errorf("state = %s, want failed", st)
			}
			if n := s.calls(); n != tt.turns {
				t.Errorf("model turns = %d, want %d", n, tt.turns)
			}
		})
	}
}

// TestChildMaxDuration: reaching a child's maximum duration cancels it; it
// stops at its next boundary and fails with class deadline_exceeded, in the
// background and in the foreground.
func TestChildMaxDuration(t *testing.T) {
	for _, background := range []bool{true, false} {
		t.Run(fmt.Sprintf("background=%v", background), func(t *testing.T) {
			ctx := context.Background()
			clock := fakeclock.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
			rec := &work.Recorder{}
			sup := work.New(work.WithObserver(rec), work.WithClock(clock))
			defer closeSup(t, sup)
			in := make(chan struct{})
			slow := funcTool{name: "slow", desc: "Blocks until cancelled.", fn: func(ctx context.Context, _ string) (string, error) {
				close(in)
				<-ctx.Done()
				return "partial", nil // returns normally: the boundary stops the child
			}}
			s := &spy{inner: scripted.New(scripted.ReActCall("slow", "x"), scripted.ReActFinal("too late"))}
			child := lc.FromExecutor("slowpoke", "Slow.", agents.NewExecutor(agents.NewOneShotAgent(s, []tools.Tool{slow})),
				lc.WithMaxDuration(time.Minute))
			kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{lc.Backgroundable(child)})
			if err != nil {
				t.Fatal(err)
			}
			defer kit.Release()
			tool := toolNamed(t, kit.Tools(), "slowpoke")
			if background {
				id := refID(callOK(t, ctx, tool, `{"input":"go","run_in_background":true}`), "slowpoke")
				recv(t, in, "the slow tool")
				clock.Advance(time.Minute)
				if st := awaitState(t, sup, kit.Owner(), id); st != work.StateFailed {
					t.Fatalf("state = %s, want failed", st)
				}
				if class := eventOf(t, rec, id, work.EventFailed).ErrorClass; class != work.ClassDeadline {
					t.Errorf("failure class = %q, want %q", class, work.ClassDeadline)
				}
			} else {
				done := make(chan string)
				go func() {
					out, _ := tool.Call(ctx, `{"input":"go"}`)
					done <- out
				}()
				recv(t, in, "the slow tool")
				clock.Advance(time.Minute)
				var out string
				select {
				case out = <-done:
				case <-time.After(guard):
					t.Fatal("foreground call did not return")
				}
				if !strings.Contains(out, `"code":"child_failed"`) || !strings.Contains(out, work.ClassDeadline) {
					t.Errorf("foreground = %s, want child_failed (deadline_exceeded)", out)
				}
				var end work.CallEnd
				for _, c := range rec.Calls() {
					if c.Call.Tool == "slowpoke" {
						end = c.End
					}
				}
				if end.ErrorClass != work.ClassDeadline {
					t.Errorf("call end = %+v, want class %s", end, work.ClassDeadline)
				}
			}
			if n := s.calls(); n != 1 {
				t.Errorf("the child's model was called %d times, want 1", n)
			}
		})
	}
}

// TestRetrofit: an OpenAIFunctionsAgent can be prepared after it was
// built; the text agents cannot, and the error says to rebuild them.
func TestRetrofit(t *testing.T) {
	ctx := context.Background()
	sup := work.New()
	defer closeSup(t, sup)
	job := lc.NewFunction("job", "A job.", func(context.Context, string) (string, error) { return "job output", nil })
	lookup := constTool("lookup", "looked up")
	log := &toolLog{}
	m := scripted.New(
		scripted.ToolCall("job", `{"input":"x","run_in_background":true}`),
		scripted.Func(func(scripted.Request) scripted.Step {
			id := refID(log.outputs("job")[0], "job")
			return scripted.ToolCall("work", js(map[string]string{"action": "result", "id": id, "timeout": "10s"}))
		}),
		scripted.Text("done"),
	)
	original := agents.NewOpenAIFunctionsAgent(m, []tools.Tool{lookup, lc.Backgroundable(job)})
	a, kit, err := lc.Retrofit(ctx, sup, original)
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	fa := a.(*agents.OpenAIFunctionsAgent)
	fa.Tools = log.wrap(fa.Tools)
	if out, err := chains.Run(ctx, agents.NewExecutor(fa), "go"); err != nil || out != "done" {
		t.Fatalf("run = %q, %v", out, err)
	}
	if got := log.outputs("work"); len(got) != 1 || got[0] != "job output" {
		t.Errorf("result = %q", got)
	}
	if names := m.Requests()[0].ToolNames(); len(names) != 6 || names[2] != "work" {
		t.Errorf("offered = %q, want lookup, job, work as Tools and Functions", names)
	}
	if len(original.Tools) != 2 || original.LLM != llms.Model(m) {
		t.Errorf("Retrofit changed the original agent")
	}

	for _, orig := range []agents.Agent{
		agents.NewOneShotAgent(m, []tools.Tool{lc.Backgroundable(job)}),
		agents.NewConversationalAgent(m, []tools.Tool{lc.Backgroundable(job)}),
	} {
		if _, _, err := lc.Retrofit(ctx, sup, orig); err == nil || !strings.Contains(err.Error(), "rebuild") {
			t.Errorf("Retrofit(%T) error = %v, want one saying to rebuild", orig, err)
		}
	}
}

// TestPrepareErrors lists the preparation errors.
func TestPrepareErrors(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	fn := func(context.Context, string) (string, error) { return "", nil }
	reserved := lc.WithSchema(map[string]any{"type": "object", "properties": map[string]any{"run_in_background": map[string]any{"type": "boolean"}}})
	tests := []struct {
		name  string
		model llms.Model
		tools []tools.Tool
		opts  []lc.Option
		want  string
	}{
		{"duplicate names", scripted.New(), []tools.Tool{constTool("a", ""), constTool("a", "")}, nil, `two tools are named "a"`},
		{"duplicate child", scripted.New(), []tools.Tool{lc.NewFunction("a", "", fn), lc.Backgroundable(lc.NewFunction("a", "", fn))}, nil, `two tools are named "a"`},
		{"names differing only in case", scripted.New(), []tools.Tool{constTool("Search", ""), constTool("search", "")}, nil, "differ only in case"},
		{"authored work", scripted.New(), []tools.Tool{constTool("work", ""), lc.Backgroundable(lc.NewFunction("a", "", fn))}, nil, `"work"`},
		{"authored Work, another case", scripted.New(), []tools.Tool{lc.Backgroundable(lc.NewFunction("a", "", fn)), constTool("Work", "")}, nil, `"Work"`},
		{"authored WORK child", scripted.New(), []tools.Tool{lc.Backgroundable(lc.NewFunction("a", "", fn)), lc.NewFunction("WORK", "", fn)}, nil, `"WORK"`},
		{"work in the prompt", scripted.New(), []tools.Tool{lc.Backgroundable(lc.NewFunction("a", "", fn))}, []lc.Option{lc.WithPromptTools("work")}, `"work"`},
		{"Work in the prompt", scripted.New(), []tools.Tool{lc.Backgroundable(lc.NewFunction("a", "", fn))}, []lc.Option{lc.WithPromptTools("Work")}, `"Work"`},
		{"typed nil tool", scripted.New(), []tools.Tool{(*ptrTool)(nil)}, nil, "tool 0 is nil (*langchaingo_test.ptrTool)"},
		{"typed nil child", scripted.New(), []tools.Tool{constTool("a", ""), (*lc.Child)(nil)}, nil, "tool 1 is nil (*langchaingo.Child)"},
		{"FromTool of nil", scripted.New(), []tools.Tool{lc.Backgroundable(lc.FromTool(nil))}, nil, "nil tool"},
		{"FromTool of typed nil", scripted.New(), []tools.Tool{lc.FromTool((*ptrTool)(nil))}, nil, "nil tool"},
		{"FromExecutor of nil", scripted.New(), []tools.Tool{lc.FromExecutor("a", "", nil)}, nil, "nil executor"},
		{"typed nil model", (*scripted.Model)(nil), nil, nil, "nil model"},
		{"background schema with run_in_background", scripted.New(), []tools.Tool{lc.Backgroundable(lc.NewFunction("a", "", fn, reserved))}, nil, "run_in_background"},
		{"foreground schema with run_in_background", scripted.New(), []tools.Tool{lc.NewFunction("a", "", fn, reserved)}, nil, "run_in_background"},
		{"schema not an object", scripted.New(), []tools.Tool{lc.NewFunction("a", "", fn, lc.WithSchema(map[string]any{"type": "string"}))}, nil, "object schema"},
		{"nil tool", scripted.New(), []tools.Tool{nil}, nil, "nil"},
		{"nil model", nil, nil, nil, "nil model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kit, err := lc.Prepare(context.Background(), sup, tt.model, tt.tools, tt.opts...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Prepare error = %v, want one containing %q", err, tt.want)
			}
			if kit != nil {
				t.Errorf("Prepare returned a Kit with its error")
			}
		})
	}
}

// ptrTool is a tool with pointer methods, so that a nil *ptrTool is a
// typed nil: its Name dereferences and panics.
type ptrTool struct{ name string }

func (p *ptrTool) Name() string                                 { return p.name }
func (p *ptrTool) Description() string                          { return "a pointer tool" }
func (p *ptrTool) Call(context.Context, string) (string, error) { return p.name, nil }

// TestPrepareWorkNameWithoutBackground: with no backgroundable child there
// is no automatic work tool, so an ordinary tool named work is allowed.
func TestPrepareWorkNameWithoutBackground(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	kit, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{constTool("work", "mine")})
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	defer kit.Release()
	if ts := kit.Tools(); len(ts) != 1 || ts[0].Name() != "work" || ts[0].Description() != "Returns a constant." {
		t.Fatalf("tools = %v, want the authored work tool only", ts)
	}
}

// TestPrepareKeepsOrder: Kit.Tools is in the caller's order, work last.
func TestPrepareKeepsOrder(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	fn := func(context.Context, string) (string, error) { return "", nil }
	kit, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{
		constTool("zeta", ""), lc.Backgroundable(lc.NewFunction("mid", "", fn)), constTool("alpha", ""), lc.NewFunction("beta", "", fn),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	var got []string
	for _, tl := range kit.Tools() {
		got = append(got, tl.Name())
	}
	if want := "zeta mid alpha beta work"; strings.Join(got, " ") != want {
		t.Errorf("tools = %v, want %s", got, want)
	}
}

// TestPanickingChild: a child that panics (in its body or in one of its
// tools) fails its Work with class panic; the process goes on.
func TestPanickingChild(t *testing.T) {
	ctx := context.Background()
	rec := &work.Recorder{}
	sup := work.New(work.WithObserver(rec))
	defer closeSup(t, sup)
	fnChild := lc.NewFunction("boom", "Panics.", func(context.Context, string) (string, error) { panic("PANIC-VALUE") })
	bad := funcTool{name: "bad", desc: "Panics.", fn: func(context.Context, string) (string, error) { panic("PANIC-VALUE in a tool") }}
	agentChild := lc.FromExecutor("agent_boom", "Its tool panics.",
		agents.NewExecutor(agents.NewOneShotAgent(scripted.New(scripted.ReActCall("bad", "x")), []tools.Tool{bad})))
	kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{lc.Backgroundable(fnChild), lc.Backgroundable(agentChild)})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	for _, name := range []string{"boom", "agent_boom"} {
		id := refID(callOK(t, ctx, toolNamed(t, kit.Tools(), name), `{"input":"x","run_in_background":true}`), name)
		if st := awaitState(t, sup, kit.Owner(), id); st != work.StateFailed {
			t.Errorf("%s: state = %s, want failed", name, st)
		}
		if class := eventOf(t, rec, id, work.EventFailed).ErrorClass; class != work.ClassPanic {
			t.Errorf("%s: class = %q, want panic", name, class)
		}
		out := callOK(t, ctx, workTool(t, kit.Tools()), js(map[string]string{"action": "result", "id": id}))
		if decode(t, out)["state"] != "failed" || strings.Contains(out, "PANIC-VALUE") {
			t.Errorf("%s: result = %s, want the failed status only", name, out)
		}
	}
}

// TestFromExecutorFreshMemory: a Conversational child with memory runs
// twice without sharing history, and its memory's configuration (here a
// custom key read by its prompt) is kept.
func TestFromExecutorFreshMemory(t *testing.T) {
	ctx := context.Background()
	sup := work.New()
	defer closeSup(t, sup)
	m := scripted.New(scripted.ConversationalFinal("FIRST-ANSWER"), scripted.ConversationalFinal("SECOND-ANSWER"))
	mem := memory.NewConversationBuffer(memory.WithMemoryKey("chat_log"))
	agent := agents.NewConversationalAgent(m, nil,
		agents.WithPromptSuffix("Previous conversation history:\n{{.chat_log}}\n\nNew input: {{.input}}\n\nThought:{{.agent_scratchpad}}"))
	child := lc.FromExecutor("chat", "Chats.", agents.NewExecutor(agent, agents.WithMemory(mem)))
	kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{child})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	tool := toolNamed(t, kit.Tools(), "chat")
	if out := callOK(t, ctx, tool, "FIRST-QUESTION"); out != "FIRST-ANSWER" {
		t.Fatalf("first run = %q", out)
	}
	if out := callOK(t, ctx, tool, "SECOND-QUESTION"); out != "SECOND-ANSWER" {
		t.Fatalf("second run = %q", out)
	}
	second := m.Requests()[1].Text()
	if strings.Contains(second, "FIRST") || !strings.Contains(second, "SECOND-QUESTION") {
		t.Errorf("the second run saw the first one's history:\n%s", second)
	}
	if msgs, _ := mem.ChatHistory.Messages(ctx); len(msgs) != 0 {
		t.Errorf("the executor's own memory was written: %v", msgs)
	}
}

// TestNestedPrepare: a child built with NewAgent whose build func calls
// Prepare with its ctx gets an owner one level deeper, and background work
// of its own.
func TestNestedPrepare(t *testing.T) {
	ctx := context.Background()
	sup := work.New()
	defer closeSup(t, sup)
	var (
		mu     sync.Mutex
		owners []work.Owner
	)
	leaf := lc.NewFunction("leaf", "A leaf job.", func(context.Context, string) (string, error) { return "leaf output", nil })
	nested := lc.NewAgent("nested", "Has background work of its own.", func(ctx context.Context) (*agents.Executor, error) {
		log := &toolLog{}
		m := scripted.New(
			scripted.ReActCall("leaf", `{"input":"x","run_in_background":true}`),
			scripted.Func(func(scripted.Request) scripted.Step {
				id := refID(log.outputs("leaf")[0], "leaf")
				return scripted.ReActCall("work", js(map[string]string{"action": "result", "id": id, "timeout": "10s"}))
			}),
			scripted.Func(func(scripted.Request) scripted.Step {
				return scripted.ReActFinal("nested saw: " + log.outputs("work")[0])
			}),
		)
		kit, err := lc.Prepare(ctx, sup, m, []tools.Tool{lc.Backgroundable(leaf)})
		if err != nil {
			return nil, err
		}
		mu.Lock()
		owners = append(owners, kit.Owner())
		mu.Unlock()
		return agents.NewExecutor(agents.NewOneShotAgent(kit.Model(), log.wrap(kit.Tools()))), nil
	})
	kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{lc.Backgroundable(nested)}, lc.WithOwner("top"))
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	tool := toolNamed(t, kit.Tools(), "nested")
	if out := callOK(t, ctx, tool, `{"input":"go"}`); out != "nested saw: leaf output" {
		t.Errorf("foreground nested = %q", out)
	}
	id := refID(callOK(t, ctx, tool, `{"input":"go","run_in_background":true}`), "nested")
	if out := callOK(t, ctx, workTool(t, kit.Tools()), js(map[string]string{"action": "result", "id": id, "timeout": "10s"})); out != "nested saw: leaf output" {
		t.Errorf("background nested = %q", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(owners) != 2 {
		t.Fatalf("built %d nested kits, want 2", len(owners))
	}
	for _, o := range owners {
		if o.Depth() != 1 || !strings.HasPrefix(o.ID(), "top/") {
			t.Errorf("nested owner = %q depth %d, want top/... depth 1", o.ID(), o.Depth())
		}
	}
	if owners[1].ID() != "top/"+id {
		t.Errorf("background nested owner = %q, want top/%s", owners[1].ID(), id)
	}
}

// TestModelBoundary: the coordinator's Model appends the status block as a
// new final human message only when the owner has visible Work, and never
// writes into the caller's slice (not even its spare capacity).
func TestModelBoundary(t *testing.T) {
	ctx := context.Background()
	sup := work.New()
	defer closeSup(t, sup)
	job := lc.NewFunction("job", "A job.", func(context.Context, string) (string, error) { return "out", nil })
	m := scripted.New(scripted.Text("a"), scripted.Text("b"))
	kit, err := lc.Prepare(ctx, sup, m, []tools.Tool{lc.Backgroundable(job)})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	sentinel := llms.TextParts(llms.ChatMessageTypeAI, "SENTINEL")
	backing := make([]llms.MessageContent, 2, 4)
	backing[0] = llms.TextParts(llms.ChatMessageTypeSystem, "sys")
	backing[1] = sentinel
	msgs := backing[:1]

	if _, err := kit.Model().GenerateContent(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	if n := len(m.Requests()[0].Messages); n != 1 {
		t.Errorf("with no work the request has %d messages, want 1", n)
	}
	id := refID(callOK(t, ctx, toolNamed(t, kit.Tools(), "job"), `{"input":"x","run_in_background":true}`), "job")
	awaitState(t, sup, kit.Owner(), id)
	if _, err := kit.Model().GenerateContent(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	req := m.Requests()[1]
	if len(req.Messages) != 2 || req.Messages[0].Role != llms.ChatMessageTypeSystem || req.Messages[0].Text() != "sys" {
		t.Fatalf("request = %+v", req.Messages)
	}
	last := req.LastMessage()
	if last.Role != llms.ChatMessageTypeHuman || !strings.HasPrefix(last.Text(), "[background work]") || last.Parts[0].Cached ||
		!strings.Contains(last.Text(), id+" | job | completed | ") || strings.Contains(last.Text(), "out\n") {
		t.Errorf("status block message = %+v", last)
	}
	if len(msgs) != 1 || !reflect.DeepEqual(backing[1], sentinel) {
		t.Errorf("the caller's slice was written: %+v", backing)
	}
}

// TestUnpreparedBackground: a Background used outside Prepare does
// nothing and says so, without a Go error.
func TestUnpreparedBackground(t *testing.T) {
	ran := false
	b := lc.Backgroundable(lc.NewFunction("job", "A job.", func(context.Context, string) (string, error) { ran = true; return "", nil }))
	out, err := b.Call(context.Background(), `{"input":"x","run_in_background":true}`)
	if err != nil || !strings.Contains(out, `"code":"not_prepared"`) || ran {
		t.Errorf("Call = %q, %v (ran %v)", out, err, ran)
	}
}

// hiding answers with a scripted model but unwraps to another one: it
// stands for a logging wrapper around langchaingo's OpenAI client.
type hiding struct {
	*scripted.Model
	under llms.Model
}

func (h hiding) Unwrap() llms.Model { return h.under }

// TestOpenAIClientGetsFunctionsOnly: langchaingo's OpenAI client turns
// Functions and Tools both into tools, so behind a wrapper that unwraps to
// it the real schemas go as Functions only; any other model gets both.
func TestOpenAIClientGetsFunctionsOnly(t *testing.T) {
	ctx := context.Background()
	sup := work.New()
	defer closeSup(t, sup)
	client, err := openai.New(openai.WithToken("test-token-not-used"))
	if err != nil {
		t.Fatal(err)
	}
	job := lc.NewFunction("job", "A job.", func(context.Context, string) (string, error) { return "", nil })
	defs := []llms.FunctionDefinition{{Name: "job", Description: "A job.", Parameters: json.RawMessage(arg1Schema)}}
	for _, tt := range []struct {
		name      string
		model     func(*scripted.Model) llms.Model
		wantTools int
	}{
		{"OpenAI client under a wrapper", func(m *scripted.Model) llms.Model { return hiding{m, client} }, 0},
		{"another model", func(m *scripted.Model) llms.Model { return hiding{m, scripted.New()} }, 1},
		{"no Unwrap", func(m *scripted.Model) llms.Model { return m }, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := scripted.New()
			kit, err := lc.Prepare(ctx, sup, tt.model(m), []tools.Tool{lc.Backgroundable(job)})
			if err != nil {
				t.Fatal(err)
			}
			defer kit.Release()
			// Once with Functions (the functions agent), once with Tools
			// only (any other caller of the Kit's model).
			ts := []llms.Tool{{Type: "function", Function: &defs[0]}}
			for _, opt := range []llms.CallOption{llms.WithFunctions(defs), llms.WithTools(ts)} {
				m.Append(scripted.Text("ok"))
				if _, err := kit.Model().GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}, opt); err != nil {
					t.Fatal(err)
				}
				reqs := m.Requests()
				req := reqs[len(reqs)-1]
				if len(req.Functions) != 1 || len(req.Tools) != tt.wantTools || !strings.Contains(string(req.Functions[0].Parameters), "run_in_background") {
					t.Errorf("functions %d, tools %d (want %d); schema %s", len(req.Functions), len(req.Tools), tt.wantTools, req.Functions[0].Parameters)
				}
			}
		})
	}
}

// TestFromTool: any existing tool becomes a backgroundable function child:
// launched with run_in_background it runs on the child's context and its
// exact output is the result; its Go error fails the Work (state only).
func TestFromTool(t *testing.T) {
	ctx := context.Background()
	sup := work.New()
	defer closeSup(t, sup)
	release := make(chan struct{})
	slow := funcTool{name: "fetch_url", desc: "Fetches a URL (slow).", fn: func(ctx context.Context, in string) (string, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if in == "bad" {
			return "", errors.New("FROMTOOL-SECRET-FAILURE")
		}
		return "fetched " + in, nil
	}}
	child := lc.FromTool(slow, lc.WithMaxResultBytes(1024))
	if child.Name() != "fetch_url" || child.Description() != "Fetches a URL (slow)." {
		t.Fatalf("child = %s / %s", child.Name(), child.Description())
	}
	kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{lc.Backgroundable(child)})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	tool := toolNamed(t, kit.Tools(), "fetch_url")
	okID := wantRef(t, callOK(t, ctx, tool, `{"input":"https://go.dev","run_in_background":true}`), "fetch_url")
	badID := wantRef(t, callOK(t, ctx, tool, `{"input":"bad","run_in_background":true}`), "fetch_url")
	close(release)
	wt := workTool(t, kit.Tools())
	if got := callOK(t, ctx, wt, js(map[string]string{"action": "result", "id": okID, "timeout": "10s"})); got != "fetched https://go.dev" {
		t.Errorf("result = %q", got)
	}
	got := callOK(t, ctx, wt, js(map[string]string{"action": "result", "id": badID, "timeout": "10s"}))
	if !strings.Contains(got, `"state":"failed"`) || strings.Contains(got, "SECRET") {
		t.Errorf("failed result = %q, want the failed state without the error text", got)
	}
	// In the foreground it returns the tool's exact output.
	if got := callOK(t, ctx, tool, `{"input":"example.org"}`); got != "fetched example.org" {
		t.Errorf("foreground = %q", got)
	}
}
