package langchaingo_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	pt "github.com/agentwork/agentwork/adapters/langchaingo/providertest"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

// loopModel is a child's model that never finishes on its own: every
// request with tools gets callsPerTurn calls of "search"; a request
// without tools (the final one) gets the answer "partial answer". Every
// response reports 60 input and 40 output tokens. It records, per request,
// whether it declared tools and whether it carried the final instruction.
type loopModel struct {
	callsPerTurn int
	react        bool // answers as a OneShot agent reads text
	mu           sync.Mutex
	withTools    []bool
	final        []bool
}

func (m *loopModel) Call(ctx context.Context, p string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, p, opts...)
}

func (m *loopModel) GenerateContent(_ context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var co llms.CallOptions
	for _, o := range opts {
		o(&co)
	}
	last := ""
	if n := len(msgs); n > 0 {
		for _, p := range msgs[n-1].Parts {
			if t, ok := p.(llms.TextContent); ok {
				last += t.Text
			}
		}
	}
	tools := len(co.Functions)+len(co.Tools) > 0
	final := strings.HasPrefix(last, "[budget]")
	m.mu.Lock()
	n := len(m.withTools)
	m.withTools = append(m.withTools, tools)
	m.final = append(m.final, final)
	m.mu.Unlock()
	info := map[string]any{"PromptTokens": 60, "CompletionTokens": 40}
	c := &llms.ContentChoice{GenerationInfo: info}
	switch {
	case m.react && final:
		c.Content = "Final Answer: partial answer"
	case m.react:
		c.Content = "Thought: more\nAction: search\nAction Input: go"
	case !tools:
		c.Content = "partial answer"
	default:
		for i := range m.callsPerTurn {
			c.ToolCalls = append(c.ToolCalls, llms.ToolCall{ID: fmt.Sprintf("call_%d_%d", n, i), Type: "function",
				FunctionCall: &llms.FunctionCall{Name: "search", Arguments: `{"__arg1":"go"}`}})
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{c}}, nil
}

func (m *loopModel) requests() (withTools, final []bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]bool(nil), m.withTools...), append([]bool(nil), m.final...)
}

// countingSearch counts its calls.
type countingSearch struct {
	mu sync.Mutex
	n  int
}

func (s *countingSearch) Name() string        { return "search" }
func (s *countingSearch) Description() string { return "search the web" }
func (s *countingSearch) Call(context.Context, string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return "a result", nil
}
func (s *countingSearch) calls() int { s.mu.Lock(); defer s.mu.Unlock(); return s.n }

// launchAndRead starts child in the background through a Kit and returns
// its result through the work tool, with its status.
func launchAndRead(t *testing.T, sup *work.Engine, child *lc.Child, opts ...lc.Option) (string, work.Status) {
	t.Helper()
	ctx := t.Context()
	kit, err := lc.Prepare(ctx, sup, &spy{}, []tools.Tool{lc.Backgroundable(child)}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	out := callOK(t, ctx, toolNamed(t, kit.Tools(), child.Name()), `{"input":"go","run_in_background":true}`)
	id := wantRef(t, out, child.Name())
	awaitState(t, sup, kit.Owner(), id)
	res := callOK(t, ctx, workTool(t, kit.Tools()), js(map[string]any{"action": "result", "id": id}))
	st, err := sup.Status(ctx, kit.Owner(), id)
	if err != nil {
		t.Fatal(err)
	}
	return res, st
}

func TestBudgetStopsLoopingChild(t *testing.T) {
	tests := []struct {
		name         string
		budget       work.Budget
		callsPerTurn int
		react        bool
		ordinary     int // requests with tools before the final one
		toolCalls    int
		exhausted    string
	}{
		{"turns", work.Budget{MaxTurns: 3}, 1, false, 3, 3, observe.BudgetTurns},
		{"turns, text agent", work.Budget{MaxTurns: 3}, 0, true, 3, 3, observe.BudgetTurns},
		{"tool calls", work.Budget{MaxToolCalls: 3}, 2, false, 2, 3, observe.BudgetToolCalls},
		{"tool calls, text agent", work.Budget{MaxToolCalls: 2}, 0, true, 2, 2, observe.BudgetToolCalls},
		{"tokens", work.Budget{MaxTokens: 250}, 1, false, 3, 3, observe.BudgetTokens},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &enginetest.Recorder{}
			sup := work.New(work.WithObserver(rec))
			defer closeSup(t, sup)
			m := &loopModel{callsPerTurn: tt.callsPerTurn, react: tt.react}
			search := &countingSearch{}
			var agent agents.Agent = agents.NewOpenAIFunctionsAgent(m, []tools.Tool{search})
			if tt.react {
				agent = agents.NewOneShotAgent(m, []tools.Tool{search})
			}
			exec := agents.NewExecutor(agent, agents.WithMaxIterations(100))
			child := lc.FromExecutor("researcher", "researches", exec, lc.WithBudget(tt.budget))
			out, st := launchAndRead(t, sup, child)
			if out != "partial answer" || st.State != work.StateCompleted || st.BudgetExhausted != tt.exhausted {
				t.Fatalf("result %q, status %+v", out, st)
			}
			withTools, final := m.requests()
			if len(withTools) != tt.ordinary+1 || !final[tt.ordinary] {
				t.Fatalf("requests: tools %v, final %v; want %d ordinary then the final one", withTools, final, tt.ordinary)
			}
			for i := range tt.ordinary {
				if final[i] || (!tt.react && !withTools[i]) {
					t.Fatalf("request %d: tools %v, final %v", i, withTools, final)
				}
			}
			if !tt.react && withTools[tt.ordinary] {
				t.Fatal("the final request declared tools")
			}
			if search.calls() != tt.toolCalls {
				t.Fatalf("tool calls = %d, want %d", search.calls(), tt.toolCalls)
			}
			var usage []observe.Usage
			for _, e := range rec.Events() {
				if e.Type == observe.EventUsage {
					usage = append(usage, e.Usage)
				}
			}
			want := observe.Usage{Turns: tt.ordinary, ToolCalls: tt.toolCalls,
				InputTokens: 60 * int64(tt.ordinary+1), OutputTokens: 40 * int64(tt.ordinary+1)}
			if len(usage) != 1 || usage[0] != want {
				t.Fatalf("usage %+v, want %+v", usage, want)
			}
		})
	}
}

func TestBudgetFailOnExhaustion(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	m := &loopModel{callsPerTurn: 1}
	exec := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(m, []tools.Tool{&countingSearch{}}), agents.WithMaxIterations(100))
	child := lc.FromExecutor("researcher", "researches", exec, lc.WithBudget(work.Budget{MaxTurns: 2}), lc.WithFailOnBudget())
	out, st := launchAndRead(t, sup, child)
	if st.State != work.StateFailed || st.BudgetExhausted != observe.BudgetTurns || strings.Contains(out, "partial") {
		t.Fatalf("result %q, status %+v", out, st)
	}
	if withTools, _ := m.requests(); len(withTools) != 2 {
		t.Fatalf("requests = %v", withTools)
	}
}

func TestPoolRefusesStartWithErrorObject(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	ctx := t.Context()
	release := make(chan struct{})
	slow := lc.NewFunction("slow", "waits", func(ctx context.Context, _ string) (string, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return "done", nil
	}, lc.WithBudget(work.Budget{MaxTurns: 4}))
	kit, err := lc.Prepare(ctx, sup, &spy{}, []tools.Tool{lc.Backgroundable(slow)}, lc.WithPool(work.Budget{MaxTurns: 10}))
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	tool := toolNamed(t, kit.Tools(), "slow")
	first := wantRef(t, callOK(t, ctx, tool, `{"input":"a","run_in_background":true}`), "slow")
	wantRef(t, callOK(t, ctx, tool, `{"input":"b","run_in_background":true}`), "slow")
	refused := decode(t, callOK(t, ctx, tool, `{"input":"c","run_in_background":true}`))
	errObj, _ := refused["error"].(map[string]any)
	if errObj["code"] != "budget_exhausted" {
		t.Fatalf("third start = %v", refused)
	}
	if l, _ := sup.List(ctx, kit.Owner()); len(l) != 2 {
		t.Fatalf("a refused start left Work: %d", len(l))
	}
	close(release)
	awaitState(t, sup, kit.Owner(), first)
	wantRef(t, callOK(t, ctx, tool, `{"input":"c","run_in_background":true}`), "slow")
}

func TestPoolInsideChildFails(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	got := make(chan error, 1)
	child := lc.NewFunction("nested", "prepares inside", func(ctx context.Context, _ string) (string, error) {
		_, err := lc.Prepare(ctx, sup, &spy{}, nil, lc.WithPool(work.Budget{MaxTurns: 1}))
		got <- err
		return "", nil
	})
	if _, err := child.Call(t.Context(), "x"); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		// Called directly the child is not a child run: no error.
		t.Fatalf("outside a child run: %v", err)
	}
	kit, err := lc.Prepare(t.Context(), sup, &spy{}, []tools.Tool{child})
	if err != nil {
		t.Fatal(err)
	}
	callOK(t, t.Context(), toolNamed(t, kit.Tools(), "nested"), "x")
	if err := <-got; err == nil || !strings.Contains(err.Error(), "WithPool inside a child") {
		t.Fatalf("inside a child: %v", err)
	}
}

// TestBudgetOnProviders runs a looping child on each real client against
// its fake server until its token budget runs out: the usage each client
// reports is counted, and the final request works on each (the anthropic
// client keeps the tool definitions its history needs).
func TestBudgetOnProviders(t *testing.T) {
	for _, name := range []string{"openai", "anthropic", "ollama-openai-v1"} {
		t.Run(name, func(t *testing.T) {
			script := pt.ScriptFunc(func(req *pt.Request) pt.Reply {
				if strings.Contains(req.Messages[len(req.Messages)-1].Text, "[budget]") {
					return pt.Say("partial answer")
				}
				return pt.Calls(pt.Call("search", `{"__arg1":"go"}`))
			})
			srv, llm := providerNamed(t, name).start(t, script)
			sup := work.New()
			defer closeSup(t, sup)
			exec := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(llm, []tools.Tool{&countingSearch{}}), agents.WithMaxIterations(100))
			child := lc.FromExecutor("researcher", "researches", exec, lc.WithBudget(work.Budget{MaxTokens: 1}))
			out, st := launchAndRead(t, sup, child)
			if out != "partial answer" || st.BudgetExhausted != observe.BudgetTokens {
				t.Fatalf("result %q, status %+v", out, st)
			}
			if n := len(srv.Requests()); n != 2 {
				t.Fatalf("%d requests, want one ordinary and the final one", n)
			}
		})
	}
}
