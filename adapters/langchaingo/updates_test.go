package langchaingo_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

const updateCanary = "CANARY-updates-5e2b"

// emitCall is one scripted emit_update call with tool-call id id.
func emitCall(id string, value any, question bool) scripted.Call {
	in := map[string]any{"value": value}
	if question {
		in["question"] = true
	}
	return scripted.Call{ID: id, Name: middleware.UpdateToolName, Arguments: js(in)}
}

// updatingChild is a backgroundable child agent (OpenAIFunctionsAgent) on
// its own scripted model, declaring updates.
func updatingChild(name string, m *scripted.Model, opts ...lc.ChildOption) lc.BackgroundChild {
	agent := agents.NewOpenAIFunctionsAgent(m, nil)
	return lc.Backgroundable(lc.FromExecutor(name, "A child that reports updates.", agents.NewExecutor(agent, agents.WithMaxIterations(5)), opts...))
}

// launch starts label in the background through the Kit's tool and
// returns the Work's id.
func launch(t *testing.T, ctx context.Context, kit *lc.Kit, label string) string {
	t.Helper()
	out := callOK(t, ctx, toolNamed(t, kit.Tools(), label), js(map[string]any{"input": "go", "run_in_background": true}))
	return wantRef(t, out, label)
}

// toolResults returns the tool responses of req, in order.
func toolResults(req scripted.Request) []string {
	var out []string
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			if p.Kind == scripted.PartToolResponse {
				out = append(out, p.Text)
			}
		}
	}
	return out
}

// TestEmitUpdate: a child that declares updates is offered emit_update;
// accepted updates answer {"emitted":true}, a retry with the same
// tool-call id is accepted once, an update over the count is a typed
// refusal the child reads and continues past; the application reads
// them in order by cursor.
func TestEmitUpdate(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	child := scripted.New(
		scripted.ToolCalls(
			emitCall("u1", "first "+updateCanary, false),
			emitCall("u1", "first "+updateCanary, false), // the same call retried
			emitCall("u2", map[string]any{"found": 3}, false),
			emitCall("u3", "over the count", false),
		),
		scripted.Text("report"),
	)
	kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{
		updatingChild("researcher", child, lc.WithUpdates(work.UpdatePolicy{MaxUpdates: 2})),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	id := launch(t, ctx, kit, "researcher")
	st, out, err := sup.Result(ctx, kit.Owner(), id, work.MaxResultWait)
	if err != nil || st.State != work.StateCompleted || out != "report" {
		t.Fatalf("Result = %+v, %q, %v; want completed with its report", st, out, err)
	}
	reqs := child.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the child made %d requests, want 2", len(reqs))
	}
	if !slices.Contains(reqs[0].ToolNames(), middleware.UpdateToolName) {
		t.Errorf("the child was offered %v, want emit_update among them", reqs[0].ToolNames())
	}
	want, _ := json.Marshal(middleware.UpdateTool().(middleware.Schemer).Schema())
	for _, def := range append(reqs[0].Functions, reqs[0].Tools...) {
		if def.Name == middleware.UpdateToolName && string(def.Parameters) != string(want) {
			t.Errorf("emit_update is declared with %s, want its real schema %s", def.Parameters, want)
		}
	}
	got := toolResults(reqs[1])
	emitted := []string{`{"emitted":true}`, `{"emitted":true}`, `{"emitted":true}`}
	if len(got) != 4 || !slices.Equal(got[:3], emitted) {
		t.Fatalf("emit_update answered %q, want three {\"emitted\":true} and a refusal", got)
	}
	refusal := decode(t, got[3])
	e, _ := refusal["error"].(map[string]any)
	if refusal["emitted"] != false || e["code"] != middleware.CodeUpdateRefused || e["reason"] != observe.UpdateRefusedCount {
		t.Errorf("the update over the count answered %s, want emitted false, code update_refused, reason count", got[3])
	}
	ups, err := sup.Updates(ctx, kit.Owner(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ups) != 2 || ups[0].Seq != 1 || string(ups[0].Value) != `"first `+updateCanary+`"` || ups[0].Key != "u1" ||
		ups[1].Seq != 2 || string(ups[1].Value) != `{"found":3}` || ups[1].Key != "u2" {
		t.Errorf("Updates = %+v, want u1 and u2 in order", ups)
	}
	if after, err := sup.Updates(ctx, kit.Owner(), id, 1); err != nil || len(after) != 1 || after[0].Seq != 2 {
		t.Errorf("Updates after 1 = %+v, %v; want the second only", after, err)
	}
}

// TestEmitUpdateReserved: emit_update is reserved only for a child that
// declares updates: an authored tool of that name (in any case) fails
// Prepare then, and is an ordinary tool otherwise.
func TestEmitUpdateReserved(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	authored := constTool("Emit_Update", "mine")
	build := func(opts ...lc.ChildOption) lc.BackgroundChild {
		agent := agents.NewOpenAIFunctionsAgent(scripted.New(), []tools.Tool{authored})
		return lc.Backgroundable(lc.FromExecutor("researcher", "Researches.", agents.NewExecutor(agent), opts...))
	}
	_, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{build(lc.WithUpdates(work.UpdatePolicy{}))})
	if !errors.Is(err, middleware.ErrUpdateToolName) {
		t.Errorf("Prepare with an authored Emit_Update and WithUpdates: %v, want ErrUpdateToolName", err)
	}
	kit, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{build()})
	if err != nil {
		t.Fatalf("Prepare without WithUpdates: %v", err)
	}
	kit.Release()
	// ReportUpdates without WithUpdates, and a policy over its ceiling.
	for name, opts := range map[string][]lc.ChildOption{
		"report without updates": {lc.ReportUpdates(nil)},
		"over the ceiling":       {lc.WithUpdates(work.UpdatePolicy{MaxUpdates: 1024 + 1})},
		"negative":               {lc.WithUpdates(work.UpdatePolicy{MaxBytes: -1})},
	} {
		child := lc.NewFunction("fn", "A function.", func(context.Context, string) (string, error) { return "", nil }, opts...)
		if _, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{child}); !errors.Is(err, middleware.ErrInvalidChild) {
			t.Errorf("%s: Prepare = %v, want ErrInvalidChild", name, err)
		}
	}
}

// TestQuestionUnanswered: a question no one answers within its timeout
// lets the child's next request go on with the framed no-answer note.
func TestQuestionUnanswered(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	child := scripted.New(
		scripted.ToolCall(middleware.UpdateToolName, js(map[string]any{"value": "Anyone?", "question": true})),
		scripted.Text("went on"),
	)
	kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{
		updatingChild("asker", child, lc.WithUpdates(work.UpdatePolicy{QuestionTimeout: 20 * time.Millisecond})),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	id := launch(t, ctx, kit, "asker")
	if st, out, err := sup.Result(ctx, kit.Owner(), id, work.MaxResultWait); err != nil || out != "went on" {
		t.Fatalf("Result = %+v, %q, %v", st, out, err)
	}
	reqs := child.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the child made %d requests, want 2", len(reqs))
	}
	if got := reqs[1].LastMessage(); got.Role != "human" || got.Text() != middleware.NoAnswerNote {
		t.Errorf("the child's next request ends with %q, want the no-answer note", got.Text())
	}
	if n := len(messagesWith(reqs[1], "[supervisor guidance] Your supervisor sent guidance")); n != 0 {
		t.Errorf("guidance was delivered with no answer sent")
	}
}

// TestEmitUpdateTextAgent: a text agent's prompt lists emit_update; its
// calls have no tool-call id, so the input's key makes a retry count once.
func TestEmitUpdateTextAgent(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	in := js(map[string]any{"value": "halfway", "key": "k1"})
	child := scripted.New(scripted.ReActCall("emit_update", in), scripted.ReActCall("emit_update", in), scripted.ReActFinal("done"))
	exec := agents.NewExecutor(agents.NewOneShotAgent(child, nil), agents.WithMaxIterations(4))
	kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{
		lc.Backgroundable(lc.FromExecutor("writer", "Writes.", exec, lc.WithUpdates(work.UpdatePolicy{}))),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	id := launch(t, ctx, kit, "writer")
	if _, out, err := sup.Result(ctx, kit.Owner(), id, work.MaxResultWait); err != nil || out != "done" {
		t.Fatalf("Result = %q, %v", out, err)
	}
	if first := child.Requests()[0].Text(); !strings.Contains(first, "emit_update") {
		t.Errorf("the text agent's prompt does not list emit_update:\n%s", first)
	}
	ups, err := sup.Updates(ctx, kit.Owner(), id, 0)
	if err != nil || len(ups) != 1 || ups[0].Key != "k1" || string(ups[0].Value) != `"halfway"` {
		t.Errorf("Updates = %+v, %v; want one update with key k1", ups, err)
	}
}

// TestNewAgentUpdateCollision: a NewAgent child's executor is built at
// each run, so an authored emit_update fails that run.
func TestNewAgentUpdateCollision(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	child := lc.NewAgent("writer", "Writes.", func(context.Context) (*agents.Executor, error) {
		return agents.NewExecutor(agents.NewOpenAIFunctionsAgent(scripted.New(scripted.Text("x")), []tools.Tool{constTool("emit_update", "mine")})), nil
	}, lc.WithUpdates(work.UpdatePolicy{}))
	kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{lc.Backgroundable(child)})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	id := launch(t, ctx, kit, "writer")
	if st, _, err := sup.Result(ctx, kit.Owner(), id, work.MaxResultWait); err != nil || st.State != work.StateFailed {
		t.Errorf("Result = %+v, %v; want the run failed", st, err)
	}
}

// TestEmitUpdateForeground: a foreground call has no Work to keep
// updates: emit_update refuses with not_declared and the child goes on.
func TestEmitUpdateForeground(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	child := scripted.New(scripted.ToolCall(middleware.UpdateToolName, js(map[string]any{"value": "x"})), scripted.Text("report"))
	kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{updatingChild("researcher", child, lc.WithUpdates(work.UpdatePolicy{}))})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	if out := callOK(t, ctx, toolNamed(t, kit.Tools(), "researcher"), js(map[string]any{"input": "go"})); out != "report" {
		t.Fatalf("foreground call = %q, want the report", out)
	}
	got := toolResults(child.Requests()[1])
	if len(got) != 1 || !strings.Contains(got[0], `"emitted":false`) || !strings.Contains(got[0], `"reason":"not_declared"`) {
		t.Errorf("emit_update in the foreground answered %q, want a not_declared refusal", got)
	}
}
