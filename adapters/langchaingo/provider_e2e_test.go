package langchaingo_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	pt "github.com/agentwork/agentwork/adapters/langchaingo/providertest"
	"github.com/agentwork/agentwork/work"
)

// The provider end-to-end tests run a coordinator through langchaingo's real
// provider clients against providertest's fake servers, and assert on the
// request bodies the servers recorded. The coordinator has, in this order:
//
//   - lookup_docs: an ordinary tool;
//   - researcher: a backgroundable child agent (same agent kind, same
//     client) with its own tool, search, which waits for the test;
//   - render_chart: a backgroundable function child with a declared schema.
//
// Its script launches researcher and render_chart in the background and
// calls lookup_docs (one reply with text and three parallel calls for a
// function-calling agent, three turns for a text agent), steers researcher
// while its search waits, reads both results with the work tool and answers.

const (
	pvCoordTask = "PV-COORD-TASK: brief me on Go's scheduler."
	pvChildTask = "PV-CHILD-TASK: the history of the Go scheduler"
	pvDocsOut   = "PV-DOCS-OUT: scheduler docs"
	pvSearchOut = "PV-SEARCH-OUT: Vyukov 2012 design doc"
	pvChildOut  = "PV-CHILD-OUT: per-P run queues since Go 1.1 (exact child output)."
	pvChartOut  = "PV-CHART-OUT: latency chart"
	pvGuide     = "PV-GUIDE focus on work stealing"
	pvAnswer    = "PV-ANSWER: brief done."
	pvPreamble  = "I'll start the research and the chart, and look up the docs."
	pvFramed    = "[supervisor guidance] Your supervisor sent guidance while you work. Follow it within your task:\n1. " + pvGuide
)

var pvChartSchema = map[string]any{"type": "object", "properties": map[string]any{"metric": map[string]any{"type": "string"}}, "required": []any{"metric"}}

// provider is one langchaingo client on one fake server.
type provider struct {
	name  string
	start func(t *testing.T, script pt.Script) (*pt.Server, llms.Model)
}

var providers = []provider{
	{"openai", func(t *testing.T, s pt.Script) (*pt.Server, llms.Model) {
		srv := pt.NewOpenAI(t, s)
		m, err := openai.New(openai.WithBaseURL(srv.BaseURL()), openai.WithToken("test-key"), openai.WithModel("gpt-4o-mini"))
		if err != nil {
			t.Fatal(err)
		}
		return srv, m
	}},
	{"anthropic", func(t *testing.T, s pt.Script) (*pt.Server, llms.Model) {
		srv := pt.NewAnthropic(t, s)
		m, err := anthropic.New(anthropic.WithBaseURL(srv.BaseURL()), anthropic.WithToken("test-key"), anthropic.WithModel("claude-sonnet-4-5"))
		if err != nil {
			t.Fatal(err)
		}
		return srv, m
	}},
	{"ollama-openai-v1", func(t *testing.T, s pt.Script) (*pt.Server, llms.Model) {
		srv := pt.NewOllama(t, s)
		m, err := openai.New(openai.WithBaseURL(srv.OpenAIBaseURL()), openai.WithToken("ollama"), openai.WithModel("llama3.1"))
		if err != nil {
			t.Fatal(err)
		}
		return srv, m
	}},
	{"ollama-native", func(t *testing.T, s pt.Script) (*pt.Server, llms.Model) {
		srv := pt.NewOllama(t, s)
		m, err := ollama.New(ollama.WithServerURL(srv.BaseURL()), ollama.WithModel("llama3.1"))
		if err != nil {
			t.Fatal(err)
		}
		return srv, m
	}},
}

func providerNamed(t *testing.T, name string) provider {
	for _, p := range providers {
		if p.name == name {
			return p
		}
	}
	t.Fatalf("no provider %q", name)
	return provider{}
}

func TestProviderOpenAIFunctions(t *testing.T) { testProvider(t, "openai", true) }
func TestProviderOpenAIOneShot(t *testing.T)   { testProvider(t, "openai", false) }
func TestProviderAnthropicFunctions(t *testing.T) {
	testProvider(t, "anthropic", true)
}
func TestProviderAnthropicOneShot(t *testing.T) { testProvider(t, "anthropic", false) }
func TestProviderOllamaOpenAIFunctions(t *testing.T) {
	testProvider(t, "ollama-openai-v1", true)
}
func TestProviderOllamaOpenAIOneShot(t *testing.T) { testProvider(t, "ollama-openai-v1", false) }
func TestProviderOllamaNativeOneShot(t *testing.T) { testProvider(t, "ollama-native", false) }

var pvRefRE = regexp.MustCompile(`\{"kind":"work\.ref","id":"([0-9a-f]{32})","targetId":"([a-z_]+)"`)

// pvRefs returns the work ids a request shows, by target.
func pvRefs(req *pt.Request) map[string]string {
	out := map[string]string{}
	for _, m := range pvRefRE.FindAllStringSubmatch(req.Text(), -1) {
		out[m[2]] = m[1]
	}
	return out
}

func testProvider(t *testing.T, providerName string, functions bool) {
	ctx := context.Background()
	p := providerNamed(t, providerName)
	inSearch, gate := make(chan struct{}), make(chan struct{})
	wait := func(req *pt.Request, ch <-chan struct{}, what string) bool {
		select {
		case <-ch:
			return true
		case <-req.Context().Done():
		case <-ctx.Done():
		}
		t.Errorf("gave up waiting for %s", what)
		return false
	}

	var coord, child []pt.Script
	if functions {
		coord = []pt.Script{
			pt.SayThenCall(pvPreamble,
				pt.Call("researcher", pt.Args(map[string]any{"input": pvChildTask, "run_in_background": true})),
				pt.Call("render_chart", pt.Args(map[string]any{"metric": "latency", "run_in_background": true})),
				pt.Call("lookup_docs", pt.Args(map[string]any{"__arg1": "scheduler"})),
			),
			pt.ScriptFunc(func(req *pt.Request) pt.Reply {
				if !wait(req, inSearch, "researcher's search") {
					return pt.Fail(500, "test gave up")
				}
				return pt.Calls(pt.Call("work", pt.Args(map[string]any{"action": "send", "id": pvRefs(req)["researcher"], "message": pvGuide})))
			}),
			pt.ScriptFunc(func(req *pt.Request) pt.Reply {
				close(gate)
				ids := pvRefs(req)
				return pt.Calls(
					pt.Call("work", pt.Args(map[string]any{"action": "result", "id": ids["researcher"], "timeout": "10s"})),
					pt.Call("work", pt.Args(map[string]any{"action": "result", "id": ids["render_chart"], "timeout": "10s"})),
				)
			}),
			pt.Say(pvAnswer),
		}
		child = []pt.Script{
			pt.Calls(pt.Call("search", pt.Args(map[string]any{"__arg1": "go scheduler"}))),
			pt.Say(pvChildOut),
		}
	} else {
		coord = []pt.Script{
			pt.ReActCall("researcher", pt.Args(map[string]any{"input": pvChildTask, "run_in_background": true})),
			pt.ReActCall("render_chart", pt.Args(map[string]any{"metric": "latency", "run_in_background": true})),
			pt.ReActCall("lookup_docs", "scheduler"),
			pt.ScriptFunc(func(req *pt.Request) pt.Reply {
				if !wait(req, inSearch, "researcher's search") {
					return pt.Fail(500, "test gave up")
				}
				return pt.ReActCall("work", pt.Args(map[string]any{"action": "send", "id": pvRefs(req)["researcher"], "message": pvGuide}))
			}),
			pt.ScriptFunc(func(req *pt.Request) pt.Reply {
				close(gate)
				return pt.ReActCall("work", pt.Args(map[string]any{"action": "result", "id": pvRefs(req)["researcher"], "timeout": "10s"}))
			}),
			pt.ScriptFunc(func(req *pt.Request) pt.Reply {
				return pt.ReActCall("work", pt.Args(map[string]any{"action": "result", "id": pvRefs(req)["render_chart"], "timeout": "10s"}))
			}),
			pt.ReActFinal(pvAnswer),
		}
		child = []pt.Script{
			pt.ReActCall("search", "go scheduler"),
			pt.ReActFinal(pvChildOut),
		}
	}
	coordSeq, childSeq := pt.Sequence(coord...), pt.Sequence(child...)
	isCoord, isChild := pt.FirstUserContains(pvCoordTask), pt.FirstUserContains(pvChildTask)
	srv, llm := p.start(t, pt.Route(pt.When(isCoord, coordSeq), pt.When(isChild, childSeq)))

	newAgent := func(m llms.Model, ts []tools.Tool) agents.Agent {
		if functions {
			return agents.NewOpenAIFunctionsAgent(m, ts)
		}
		return agents.NewOneShotAgent(m, ts)
	}
	search := funcTool{name: "search", desc: "Searches for sources.", fn: func(ctx context.Context, _ string) (string, error) {
		close(inSearch)
		select {
		case <-gate:
		case <-ctx.Done():
		}
		return pvSearchOut, nil
	}}
	researcher := lc.FromExecutor("researcher", "Researches a topic and reports.",
		agents.NewExecutor(newAgent(llm, []tools.Tool{search}), agents.WithMaxIterations(4)))
	chart := lc.NewFunction("render_chart", "Renders a chart of a metric (slow).",
		func(context.Context, string) (string, error) { return pvChartOut, nil }, lc.WithSchema(pvChartSchema))

	sup := work.New()
	defer closeSup(t, sup)
	kit, err := lc.Prepare(ctx, sup, llm, []tools.Tool{
		constTool("lookup_docs", pvDocsOut),
		lc.Backgroundable(researcher),
		lc.Backgroundable(chart),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	exec := agents.NewExecutor(newAgent(kit.Model(), kit.Tools()), agents.WithMaxIterations(10))
	answer, err := chains.Run(ctx, exec, pvCoordTask)
	if err != nil {
		t.Fatalf("coordinator run: %v", err)
	}
	if answer != pvAnswer {
		t.Errorf("answer = %q, want %q", answer, pvAnswer)
	}
	if n := coordSeq.Remaining() + childSeq.Remaining(); n != 0 {
		t.Errorf("%d scripted replies were never asked for", n)
	}

	var coordReqs, childReqs []*pt.Request
	for _, r := range srv.Requests() {
		switch {
		case isCoord(r):
			coordReqs = append(coordReqs, r)
		case isChild(r):
			childReqs = append(childReqs, r)
		}
	}
	if len(coordReqs) != len(coord) || len(childReqs) != len(child) {
		t.Fatalf("coordinator made %d requests, child %d; want %d and %d", len(coordReqs), len(childReqs), len(coord), len(child))
	}
	for _, r := range append(coordReqs[:len(coordReqs):len(coordReqs)], childReqs...) {
		wantAPI := map[string]string{"openai": "openai", "anthropic": "anthropic", "ollama-openai-v1": "openai", "ollama-native": "ollama"}[providerName]
		if r.API != wantAPI {
			t.Errorf("request %d went to the %s API, want %s", r.N, r.API, wantAPI)
		}
	}

	// Tools: each declared exactly once, with its real schema, in the
	// caller's order; a child declares its own tools only.
	if functions {
		wantCoord := []string{"lookup_docs", "researcher", "render_chart", "work"}
		for _, r := range coordReqs {
			if got := r.ToolNames(); !reflect.DeepEqual(got, wantCoord) {
				t.Errorf("coordinator request %d declares %v, want %v", r.N, got, wantCoord)
				continue
			}
			for _, tl := range r.Tools {
				want := map[string]any{}
				if err := json.Unmarshal([]byte(arg1Schema), &want); err != nil {
					t.Fatal(err)
				}
				if tl.Name != "lookup_docs" {
					want = jsonValue(t, toolNamed(t, kit.Tools(), tl.Name).(schemer).Schema())
				}
				if !reflect.DeepEqual(jsonValue(t, tl.Parameters), want) {
					t.Errorf("coordinator request %d: %s schema = %s, want %s", r.N, tl.Name, js(tl.Parameters), js(want))
				}
			}
			rib := tlProps(t, r, "researcher")
			if _, ok := rib["run_in_background"]; !ok {
				t.Errorf("coordinator request %d: researcher's schema hides run_in_background", r.N)
			}
			if _, ok := tlProps(t, r, "render_chart")["metric"]; !ok {
				t.Errorf("coordinator request %d: render_chart lost its declared field", r.N)
			}
		}
		for _, r := range childReqs {
			if got := r.ToolNames(); !reflect.DeepEqual(got, []string{"search"}) {
				t.Errorf("child request %d declares %v, want [search] (its own tools only)", r.N, got)
			}
		}
	} else {
		for _, r := range append(coordReqs[:len(coordReqs):len(coordReqs)], childReqs...) {
			if len(r.Tools) != 0 {
				t.Errorf("text-agent request %d declares tools %v; a text agent's tools are in its prompt", r.N, r.ToolNames())
			}
		}
		prompt := coordReqs[0].FirstUserText()
		for _, want := range []string{"researcher: Researches a topic and reports.", `"run_in_background": boolean`, "render_chart: Renders a chart", `"metric": string (required)`, "work: "} {
			if !strings.Contains(prompt, want) {
				t.Errorf("coordinator prompt lacks %q", want)
			}
		}
		if childPrompt := childReqs[0].FirstUserText(); !strings.Contains(childPrompt, "search: Searches for sources.") || strings.Contains(childPrompt, "researcher") {
			t.Errorf("child prompt does not show exactly its own tools:\n%s", childPrompt)
		}
	}

	// The status block is the final user content of every coordinator
	// request after the first launch, and of no child request.
	for i, r := range coordReqs {
		last := r.Last()
		isBlock := last.Role == "user" && strings.HasPrefix(last.Text, "[background work]") && len(last.ToolResults) == 0
		if i == 0 && isBlock {
			t.Errorf("coordinator request %d has a status block before any launch", r.N)
		}
		if i > 0 && !isBlock {
			t.Errorf("coordinator request %d: final message is %s %q, want the status block", r.N, last.Role, last.Text)
		}
	}
	for _, r := range childReqs {
		if strings.Contains(r.Text(), "[background work]") || strings.Contains(r.Text(), "lookup_docs") {
			t.Errorf("child request %d shows the coordinator's status or tools", r.N)
		}
	}

	// Guidance reaches the child's next request, as its final user content,
	// and only that one.
	if strings.Contains(childReqs[0].Text(), "[supervisor guidance]") {
		t.Errorf("child request 1 already has guidance")
	}
	if last := childReqs[1].Last(); last.Role != "user" || last.Text != pvFramed {
		t.Errorf("child's second request ends with %s %q, want the framed guidance %q", last.Role, last.Text, pvFramed)
	}

	// Tool results match their calls, and the launch -> result round trip
	// returns the exact child output.
	if functions {
		final := coordReqs[len(coordReqs)-1]
		ids := pvRefs(final)
		calls := final.ToolCalls()
		if len(calls) != 6 {
			t.Fatalf("final coordinator request replays %d tool calls, want 6: %+v", len(calls), calls)
		}
		for _, c := range calls {
			got, ok := final.ToolResult(c.ID)
			if !ok {
				t.Errorf("call %s (%s) has no result", c.ID, c.Name)
				continue
			}
			var args map[string]any
			_ = json.Unmarshal([]byte(c.Arguments), &args)
			var want string
			switch {
			case c.Name == "lookup_docs":
				want = pvDocsOut
			case c.Name == "researcher" || c.Name == "render_chart":
				if refID(got, c.Name) == "" {
					t.Errorf("launch %s: result %q is not its work.ref", c.Name, got)
				}
				continue
			case args["action"] == "send":
				if !strings.Contains(got, `"outcome":"accepted"`) || !strings.Contains(got, ids["researcher"]) {
					t.Errorf("send: result %q is not an accepted receipt for researcher", got)
				}
				continue
			case args["action"] == "result" && args["id"] == ids["researcher"]:
				want = pvChildOut
			case args["action"] == "result" && args["id"] == ids["render_chart"]:
				want = pvChartOut
			default:
				t.Errorf("unexpected call %s %s", c.Name, c.Arguments)
				continue
			}
			if got != want {
				t.Errorf("call %s %s: result %q, want %q", c.Name, c.Arguments, got, want)
			}
		}
		if ids["researcher"] == "" || ids["render_chart"] == "" {
			t.Errorf("launch refs missing: %v", ids)
		}
		// The child's own tool result came back to it.
		cc := childReqs[1].ToolCalls()
		if len(cc) != 1 || cc[0].Name != "search" {
			t.Fatalf("child's second request replays %+v, want one search call", cc)
		}
		if got, _ := childReqs[1].ToolResult(cc[0].ID); got != pvSearchOut {
			t.Errorf("child's search result = %q, want %q", got, pvSearchOut)
		}
	} else {
		finalPrompt := coordReqs[len(coordReqs)-1].FirstUserText()
		for _, want := range []string{"Observation: " + pvChildOut + "\n", "Observation: " + pvChartOut + "\n", "Observation: " + pvDocsOut + "\n", "Observation: " + pvSearchOut} {
			text := finalPrompt
			if strings.Contains(want, pvSearchOut) {
				text = childReqs[1].FirstUserText()
			}
			if !strings.Contains(text, want) {
				t.Errorf("prompt lacks %q", want)
			}
		}
	}
}

// tlProps returns the properties of the named tool's schema in r.
func tlProps(t *testing.T, r *pt.Request, name string) map[string]any {
	t.Helper()
	tl, ok := r.Tool(name)
	if !ok {
		return nil
	}
	props, _ := tl.Parameters["properties"].(map[string]any)
	return props
}

// jsonValue round-trips v through JSON, so that schemas compare as JSON.
func jsonValue(t *testing.T, v any) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal([]byte(js(v)), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOllamaNativeRefusesFunctionsAgent: langchaingo's llms/ollama sends no
// tools (the fake server proves it on the wire), so a function-calling
// agent on it fails preparation (FromExecutor's child, Retrofit) or its
// first request (a coordinator built from Prepare's Model), saying to use
// the OpenAI client at Ollama's /v1, instead of running with no tools.
func TestOllamaNativeRefusesFunctionsAgent(t *testing.T) {
	ctx := context.Background()
	srv := pt.NewOllama(t, pt.Sequence(pt.Say("no tools were sent")))
	llm, err := ollama.New(ollama.WithServerURL(srv.BaseURL()), ollama.WithModel("llama3.1"))
	if err != nil {
		t.Fatal(err)
	}
	// On the wire: the client drops the tools of a request that has them.
	if _, err := llm.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")},
		llms.WithTools([]llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "search", Parameters: map[string]any{"type": "object"}}}})); err != nil {
		t.Fatal(err)
	}
	if reqs := srv.Requests(); len(reqs) != 1 || len(reqs[0].Tools) != 0 || strings.Contains(string(reqs[0].Body), "search") {
		t.Fatalf("llms/ollama sent tools after all: %s", reqs[0].Body)
	}

	sup := work.New()
	defer closeSup(t, sup)
	wantErr := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, lc.ErrToolsNotSent) || !strings.Contains(err.Error(), "openai.WithBaseURL") || !strings.Contains(err.Error(), "/v1") {
			t.Errorf("%s: error = %v, want ErrToolsNotSent saying to use the OpenAI client at Ollama's /v1", what, err)
		}
	}
	search := constTool("search", "x")
	child := lc.FromExecutor("researcher", "Researches.", agents.NewExecutor(agents.NewOpenAIFunctionsAgent(llm, []tools.Tool{search})))
	kit, err := lc.Prepare(ctx, sup, llm, []tools.Tool{lc.Backgroundable(child)})
	wantErr("Prepare with a functions-agent child", err)
	if kit != nil {
		kit.Release()
	}
	_, kit, err = lc.Retrofit(ctx, sup, agents.NewOpenAIFunctionsAgent(llm, []tools.Tool{search}))
	wantErr("Retrofit", err)
	if kit != nil {
		kit.Release()
	}
	kit, err = lc.Prepare(ctx, sup, llm, []tools.Tool{search})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	_, err = chains.Run(ctx, agents.NewExecutor(agents.NewOpenAIFunctionsAgent(kit.Model(), kit.Tools())), "go")
	wantErr("a functions agent on Prepare's Model", err)
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests reached the server, want only the wire probe", n)
	}
	// A text agent on llms/ollama is fine: its tools are in the prompt.
	textKit, err := lc.Prepare(ctx, sup, llm, []tools.Tool{lc.Backgroundable(lc.FromExecutor("r", "R.", agents.NewExecutor(agents.NewOneShotAgent(llm, []tools.Tool{search}))))})
	if err != nil {
		t.Fatalf("Prepare with a OneShot child on llms/ollama: %v", err)
	}
	textKit.Release()
}
