package eino_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cloudwego/eino-ext/components/model/openai"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"

	"github.com/agentwork/agentwork/adapters/eino"
	"github.com/agentwork/agentwork/adapters/langchaingo/providertest"
)

// eino-ext's OpenAI chat model end to end against the OpenAI fake: a
// coordinator launches an agent child in the background and reads its
// result; every coordinator request declares its tools (the child, work),
// the child's requests only its own tool; the status block is on the
// wire; the tool-call ids are the provider's.
func TestOpenAIEndToEnd(t *testing.T) {
	var id string
	coordinator := providertest.Sequence(
		providertest.Calls(providertest.Call("researcher", `{"input":"golang history","run_in_background":true}`)),
		providertest.ScriptFunc(func(r *providertest.Request) providertest.Reply {
			calls := r.ToolCalls()
			out, ok := r.ToolResult(calls[len(calls)-1].ID)
			if !ok {
				t.Errorf("no tool result in %s", r.Text())
				return providertest.Say("?")
			}
			id = ref(t, out).ID
			return providertest.Calls(providertest.Call("work", `{"action":"result","id":"`+id+`","timeout":"10s"}`))
		}),
		providertest.Say("Go was announced in 2009."),
	)
	child := providertest.Sequence(
		providertest.Calls(providertest.Call("lookup", `{"key":"go"}`)),
		providertest.Say("announced in 2009"),
	)
	srv := providertest.NewOpenAI(t, providertest.Route(
		providertest.When(providertest.Declares("work"), coordinator),
		providertest.When(func(*providertest.Request) bool { return true }, child),
	))
	ctx := context.Background()
	newModel := func() *openai.ChatModel {
		m, err := openai.NewChatModel(ctx, &openai.ChatModelConfig{BaseURL: srv.BaseURL(), APIKey: "test", Model: "gpt-4o-mini"})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	lookup, err := utils.InferTool("lookup", "Looks up a key.", func(_ context.Context, in struct {
		Key string `json:"key"`
	}) (string, error) {
		return "Go: 2009", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	researcher := eino.FromAgent(newAgent(t, "researcher", newModel(), []tool.BaseTool{lookup}, eino.ChildMiddleware()))
	mw := eino.New(newSup(t))
	defer mw.Release()
	agent := newAgent(t, "coordinator", newModel(), []tool.BaseTool{eino.Backgroundable(researcher)}, mw)
	answer, results := mustRun(t, agent, "When was Go announced?")
	if answer != "Go was announced in 2009." || results[1] != "announced in 2009" {
		t.Fatalf("answer %q, results %q", answer, results)
	}
	var coordReqs, childReqs int
	for _, r := range srv.Requests() {
		names := r.ToolNames()
		if slices.Contains(names, "work") {
			coordReqs++
			if !slices.Equal(names, []string{"researcher", "work"}) {
				t.Errorf("coordinator tools = %v", names)
			}
			tool, _ := r.Tool("researcher")
			props, _ := tool.Parameters["properties"].(map[string]any)
			if _, ok := props["run_in_background"]; !ok {
				t.Errorf("the researcher's schema on the wire has no run_in_background: %v", tool.Parameters)
			}
			if r.N > 1 && !strings.Contains(r.Last().Text, "[background work] id | target") {
				t.Errorf("coordinator request %d: last message %q, want the status block", r.N, r.Last().Text)
			}
			continue
		}
		childReqs++
		if !slices.Equal(names, []string{"lookup"}) {
			t.Errorf("child tools = %v, want its own only", names)
		}
		if strings.Contains(r.Text(), "When was Go announced?") {
			t.Error("the child saw the coordinator's prompt")
		}
	}
	if coordReqs != 3 || childReqs != 2 {
		t.Fatalf("requests: coordinator %d, child %d", coordReqs, childReqs)
	}
	if eino.ProviderNameOf(newModel()) != "openai" {
		t.Fatalf("ProviderNameOf = %q", eino.ProviderNameOf(newModel()))
	}
}
