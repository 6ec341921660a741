package langchaingo_test

import (
	"context"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/openai"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

func TestProviderName(t *testing.T) {
	oa, err := openai.New(openai.WithToken("test"))
	if err != nil {
		t.Fatal(err)
	}
	an, err := anthropic.New(anthropic.WithToken("test"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		got  string
		want string
	}{
		{"openai", lc.ProviderName(oa), "openai"},
		{"anthropic", lc.ProviderName(an), "anthropic"},
		{"wrapped", lc.ProviderName(lc.WrapModel(oa)), "openai"},
		{"own method", lc.ProviderName(scripted.New()), "scripted"},
		{"nil", lc.ProviderName(nil), ""},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

// infoObserver records the TargetInfo each model-facing call begins with.
type infoObserver struct {
	observe.NopObserver
	mu    sync.Mutex
	infos map[string]observe.TargetInfo
}

func (o *infoObserver) Begin(ctx context.Context, c observe.ToolCall) (context.Context, func(observe.ToolCallEnd)) {
	info, _ := observe.TargetInfoFrom(ctx)
	o.mu.Lock()
	o.infos[c.Tool] = info
	o.mu.Unlock()
	return ctx, func(observe.ToolCallEnd) {}
}

// TestTargetInfoReachesObserver: a child tool call carries the child's
// provider (found in its executor, or set with WithProvider), agent id and
// description; a function child carries only its description.
func TestTargetInfoReachesObserver(t *testing.T) {
	obs := &infoObserver{infos: map[string]observe.TargetInfo{}}
	sup := work.New(work.WithObserver(obs))
	defer sup.Close(context.Background())
	oa, _ := openai.New(openai.WithToken("test"))
	exec := agents.NewExecutor(agents.NewOneShotAgent(scripted.New(scripted.ReActFinal("done")), nil))
	a := lc.FromExecutor("outline", "Drafts an outline.", exec, lc.WithID("outline-v1"))
	b := lc.FromExecutor("review", "Reviews.", agents.NewExecutor(agents.NewOpenAIFunctionsAgent(oa, nil)), lc.WithProvider("azure.ai.openai"))
	f := lc.NewFunction("fetch", "Fetches.", func(context.Context, string) (string, error) { return "ok", nil })
	kit, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{a, lc.Backgroundable(b), f}, lc.WithOwner("o"))
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	for _, tl := range kit.Tools() {
		switch tl.Name() {
		case "outline", "fetch":
			_, _ = tl.Call(context.Background(), `{"input":"x"}`)
		case "review":
			_, _ = tl.Call(context.Background(), `{"input":"x","run_in_background":true}`)
		}
	}
	want := map[string]observe.TargetInfo{
		"outline": {Provider: "scripted", AgentID: "outline-v1", Description: "Drafts an outline."},
		"review":  {Provider: "azure.ai.openai", AgentID: "review", Description: "Reviews."},
		"fetch":   {Description: "Fetches."},
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	for name, w := range want {
		if got := obs.infos[name]; got != w {
			t.Errorf("%s: %+v, want %+v", name, got, w)
		}
	}
}
