package langchaingo_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/work"
)

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

// TestFunctionsAgentSchemas: an OpenAIFunctionsAgent built on a Kit offers
// the prepared tools' real JSON schemas, the same in Functions and in
// Tools, while ordinary tools keep langchaingo's __arg1. (What those
// schemas hold is the conformance suite's WorkToolOnce case.)
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
		if _, hasArg1 := s.Properties["__arg1"]; hasArg1 {
			t.Errorf("%s schema has __arg1: %s", name, fn.Parameters)
		}
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
