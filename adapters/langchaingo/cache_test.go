package langchaingo_test

import (
	"context"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/work"
)

// TestToolOptionsCacheFollowsDefinitions: a Model reuses the tool options
// it built for the same function definitions, and builds them again when
// the definitions change (names, descriptions, parameters).
func TestToolOptionsCacheFollowsDefinitions(t *testing.T) {
	inner := scripted.New(scripted.Text("a"), scripted.Text("b"), scripted.Text("c"), scripted.Text("d"))
	m := lc.WrapModel(inner)
	def := func(desc, typ string) llms.FunctionDefinition {
		return llms.FunctionDefinition{Name: "search", Description: desc, Parameters: map[string]any{
			"type": "object", "properties": map[string]any{"q": map[string]string{"type": typ}}, "required": []string{"q"}}}
	}
	ctx := context.Background()
	for _, fn := range []llms.FunctionDefinition{def("Searches.", "string"), def("Searches.", "string"), def("Finds.", "string"), def("Finds.", "number")} {
		if _, err := m.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}, llms.WithFunctions([]llms.FunctionDefinition{fn})); err != nil {
			t.Fatal(err)
		}
	}
	reqs := inner.Requests()
	want := []struct{ desc, params string }{
		{"Searches.", `{"properties":{"q":{"type":"string"}},"required":["q"],"type":"object"}`},
		{"Searches.", `{"properties":{"q":{"type":"string"}},"required":["q"],"type":"object"}`},
		{"Finds.", `{"properties":{"q":{"type":"string"}},"required":["q"],"type":"object"}`},
		{"Finds.", `{"properties":{"q":{"type":"number"}},"required":["q"],"type":"object"}`},
	}
	for i, w := range want {
		r := reqs[i]
		if len(r.Functions) != 1 || len(r.Tools) != 1 {
			t.Fatalf("request %d: %d functions, %d tools", i, len(r.Functions), len(r.Tools))
		}
		for _, d := range []scripted.ToolDef{r.Functions[0], r.Tools[0]} {
			if d.Description != w.desc || string(d.Parameters) != w.params {
				t.Errorf("request %d: sent %q %s, want %q %s", i, d.Description, d.Parameters, w.desc, w.params)
			}
		}
	}
}

// TestChildSeesAgentChanges: a FromExecutor child prepares its agent once
// and again when the executor's agent, model or tools change.
func TestChildSeesAgentChanges(t *testing.T) {
	sup := work.New()
	defer sup.Close(context.Background())
	first := scripted.New(scripted.Text("one"))
	fa := agents.NewOpenAIFunctionsAgent(first, []tools.Tool{constTool("search", "x")})
	exec := agents.NewExecutor(fa)
	kit, err := lc.Prepare(context.Background(), sup, &spy{}, []tools.Tool{lc.FromExecutor("researcher", "researches", exec)})
	if err != nil {
		t.Fatal(err)
	}
	tool := kit.Tools()[0]
	if out, err := tool.Call(context.Background(), "go"); err != nil || out != "one" {
		t.Fatalf("%q, %v", out, err)
	}
	second := scripted.New(scripted.Text("two"))
	fa.LLM = second
	fa.Tools = append(fa.Tools[:1:1], constTool("fetch", "y"))
	if out, err := tool.Call(context.Background(), "go"); err != nil || out != "two" {
		t.Fatalf("%q, %v", out, err)
	}
	if r := second.Requests(); len(r) != 1 || len(r[0].Functions) != 2 {
		t.Fatalf("the second run sent %+v, want the two current tools", r)
	}
}
