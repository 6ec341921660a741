package scripted_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/memory"
	"github.com/tmc/langchaingo/tools"

	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
)

// shout is a trivial tool: it upper-cases its input and remembers every
// input it was called with.
type shout struct {
	mu     sync.Mutex
	inputs []string
	err    error
}

func (*shout) Name() string        { return "shout" }
func (*shout) Description() string { return "Upper-cases its input." }

func (s *shout) Call(_ context.Context, input string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inputs = append(s.inputs, input)
	if s.err != nil {
		return "", s.err
	}
	return strings.ToUpper(input), nil
}

func (s *shout) calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.inputs)
}

var _ tools.Tool = (*shout)(nil)

// TestAgentsEndToEnd runs each of langchaingo's three agents in an Executor
// on the scripted model: one tool call, then a final answer.
func TestAgentsEndToEnd(t *testing.T) {
	const (
		input  = "hello world"
		answer = "The tool said HELLO WORLD."
	)
	tests := []struct {
		name  string
		steps []scripted.Step
		agent func(llms.Model, []tools.Tool) agents.Agent
		// seen checks what the model saw on its second request: the
		// tool's output, delivered the agent's way.
		seen func(t *testing.T, req scripted.Request)
	}{
		{
			name:  "OneShot",
			steps: []scripted.Step{scripted.ReActCall("shout", input), scripted.ReActFinal(answer)},
			agent: func(m llms.Model, ts []tools.Tool) agents.Agent { return agents.NewOneShotAgent(m, ts) },
			seen: func(t *testing.T, req scripted.Request) {
				want := "\nAction: shout\nAction Input: hello world\nObservation: HELLO WORLD\n"
				if len(req.Messages) != 1 || req.Messages[0].Role != llms.ChatMessageTypeHuman ||
					!strings.HasSuffix(req.Messages[0].Text(), want) {
					t.Errorf("second request = %+v, want one human message ending in %q", req.Messages, want)
				}
			},
		},
		{
			name:  "Conversational",
			steps: []scripted.Step{scripted.ConversationalCall("shout", input), scripted.ConversationalFinal(answer)},
			agent: func(m llms.Model, ts []tools.Tool) agents.Agent { return agents.NewConversationalAgent(m, ts) },
			seen: func(t *testing.T, req scripted.Request) {
				want := "Thought:Do I need to use a tool? Yes\nAction: shout\nAction Input: hello world\nObservation: HELLO WORLD\nThought:"
				if len(req.Messages) != 1 || req.Messages[0].Role != llms.ChatMessageTypeHuman ||
					!strings.HasSuffix(req.Messages[0].Text(), want) {
					t.Errorf("second request = %+v, want one human message ending in %q", req.Messages, want)
				}
			},
		},
		{
			name:  "OpenAIFunctions",
			steps: []scripted.Step{scripted.FunctionsCall("shout", input), scripted.Text(answer)},
			agent: func(m llms.Model, ts []tools.Tool) agents.Agent { return agents.NewOpenAIFunctionsAgent(m, ts) },
			seen: func(t *testing.T, req scripted.Request) {
				roles := make([]llms.ChatMessageType, len(req.Messages))
				for i, m := range req.Messages {
					roles[i] = m.Role
				}
				wantRoles := []llms.ChatMessageType{"system", "human", "ai", "tool"}
				if !slices.Equal(roles, wantRoles) {
					t.Fatalf("roles = %v, want %v", roles, wantRoles)
				}
				call, resp := req.Messages[2].Parts, req.Messages[3].Parts
				// The agent replays the call with the unwrapped tool input as
				// its arguments, not the JSON the model sent.
				wantCall := []scripted.Part{{Kind: scripted.PartToolCall, ToolCallID: "call_1_1", Name: "shout", Arguments: "hello world"}}
				wantResp := []scripted.Part{{Kind: scripted.PartToolResponse, ToolCallID: "call_1_1", Text: "HELLO WORLD"}}
				if !slices.Equal(call, wantCall) || !slices.Equal(resp, wantResp) {
					t.Errorf("tool turn = %+v / %+v, want %+v / %+v", call, resp, wantCall, wantResp)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := scripted.New(tt.steps...)
			tool := &shout{}
			exec := agents.NewExecutor(tt.agent(m, []tools.Tool{tool}))

			out, err := chains.Run(context.Background(), exec, "Shout hello world.")
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if out != answer {
				t.Errorf("output = %q, want %q", out, answer)
			}
			if got := tool.calls(); !slices.Equal(got, []string{input}) {
				t.Errorf("tool inputs = %q, want %q", got, []string{input})
			}
			if n := m.Remaining(); n != 0 {
				t.Errorf("Remaining = %d, want 0", n)
			}
			reqs := m.Requests()
			if len(reqs) != 2 {
				t.Fatalf("len(Requests) = %d, want 2", len(reqs))
			}
			if !strings.Contains(reqs[0].Text(), "Shout hello world.") {
				t.Errorf("first request lacks the input: %q", reqs[0].Text())
			}
			tt.seen(t, reqs[1])
		})
	}
}

// TestOpenAIFunctionsAgentRequest pins how OpenAIFunctionsAgent offers its
// tools: as Functions with the fixed __arg1 schema, no Tools, no stop words.
func TestOpenAIFunctionsAgentRequest(t *testing.T) {
	m := scripted.New(scripted.Text("done"))
	agent := agents.NewOpenAIFunctionsAgent(m, []tools.Tool{&shout{}})
	if _, err := chains.Run(context.Background(), agents.NewExecutor(agent), "hi"); err != nil {
		t.Fatal(err)
	}
	req := m.Requests()[0]
	if len(req.Tools) != 0 || len(req.Functions) != 1 {
		t.Fatalf("Tools = %+v, Functions = %+v; want only one function", req.Tools, req.Functions)
	}
	f := req.Functions[0]
	var schema any
	if err := json.Unmarshal(f.Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"type":       "object",
		"required":   []any{"__arg1"},
		"properties": map[string]any{"__arg1": map[string]any{"title": "__arg1", "type": "string"}},
	}
	if f.Name != "shout" || f.Description != "Upper-cases its input." || !jsonEqual(schema, want) {
		t.Errorf("function = %+v (%s)", f, f.Parameters)
	}
	if req.Options.StopWords != nil {
		t.Errorf("StopWords = %q, want none", req.Options.StopWords)
	}
}

// TestTextAgentsRequest pins how the text agents offer tools: rendered into
// one human prompt, with the "\nObservation:" stop words, no functions.
func TestTextAgentsRequest(t *testing.T) {
	tests := []struct {
		name  string
		final scripted.Step
		agent func(llms.Model, []tools.Tool) agents.Agent
	}{
		{
			name:  "OneShot",
			final: scripted.ReActFinal("ok"),
			agent: func(m llms.Model, ts []tools.Tool) agents.Agent { return agents.NewOneShotAgent(m, ts) },
		},
		{
			name:  "Conversational",
			final: scripted.ConversationalFinal("ok"),
			agent: func(m llms.Model, ts []tools.Tool) agents.Agent { return agents.NewConversationalAgent(m, ts) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := scripted.New(tt.final)
			out, err := chains.Run(context.Background(), agents.NewExecutor(tt.agent(m, []tools.Tool{&shout{}})), "hi")
			if err != nil || out != "ok" {
				t.Fatalf("Run = %q, %v", out, err)
			}
			req := m.Requests()[0]
			if len(req.Messages) != 1 || req.Messages[0].Role != llms.ChatMessageTypeHuman {
				t.Errorf("messages = %+v, want one human message", req.Messages)
			}
			if len(req.Tools)+len(req.Functions) != 0 {
				t.Errorf("tools offered natively: %v", req.ToolNames())
			}
			if !strings.Contains(req.Text(), "shout: Upper-cases its input.") {
				t.Errorf("prompt lacks the tool description: %q", req.Text())
			}
			if want := []string{"\nObservation:", "\n\tObservation:"}; !slices.Equal(req.Options.StopWords, want) {
				t.Errorf("StopWords = %q, want %q", req.Options.StopWords, want)
			}
		})
	}
}

// TestOpenAIFunctionsParallelCalls scripts two tool calls in one reply: both
// run, in order, and each tool result goes back with its own call id.
func TestOpenAIFunctionsParallelCalls(t *testing.T) {
	m := scripted.New(
		scripted.ToolCalls(
			scripted.Call{Name: "shout", Arguments: `{"__arg1":"a"}`},
			scripted.Call{ID: "mine", Name: "shout", Arguments: `{"text":"b"}`}, // not __arg1: raw JSON reaches the tool
		),
		scripted.Text("done"),
	)
	tool := &shout{}
	agent := agents.NewOpenAIFunctionsAgent(m, []tools.Tool{tool})
	out, err := chains.Run(context.Background(), agents.NewExecutor(agent), "go")
	if err != nil || out != "done" {
		t.Fatalf("Run = %q, %v", out, err)
	}
	if got, want := tool.calls(), []string{"a", `{"text":"b"}`}; !slices.Equal(got, want) {
		t.Errorf("tool inputs = %q, want %q", got, want)
	}
	var ids []string
	var roles []llms.ChatMessageType
	for _, msg := range m.Requests()[1].Messages {
		roles = append(roles, msg.Role)
		for _, p := range msg.Parts {
			if p.ToolCallID != "" {
				ids = append(ids, string(p.Kind)+":"+p.ToolCallID)
			}
		}
	}
	// Each call's log differs, so the agent replays them as separate ai/tool pairs.
	if want := []llms.ChatMessageType{"system", "human", "ai", "tool", "ai", "tool"}; !slices.Equal(roles, want) {
		t.Errorf("roles = %v, want %v", roles, want)
	}
	if want := []string{"tool_call:call_1_1", "tool_response:call_1_1", "tool_call:mine", "tool_response:mine"}; !slices.Equal(ids, want) {
		t.Errorf("ids = %v, want %v", ids, want)
	}
}

// TestConversationalMemory shows a ConversationalAgent's history: executor
// memory fills {{.history}} on the next run.
func TestConversationalMemory(t *testing.T) {
	m := scripted.New(scripted.ConversationalFinal("Hi Ann."), scripted.ConversationalFinal("Ann."))
	exec := agents.NewExecutor(agents.NewConversationalAgent(m, nil), agents.WithMemory(memory.NewConversationBuffer()))
	ctx := context.Background()
	for _, in := range []string{"I am Ann.", "Who am I?"} {
		if _, err := chains.Run(ctx, exec, in); err != nil {
			t.Fatal(err)
		}
	}
	want := "Previous conversation history:\nHuman: I am Ann.\nAI: Hi Ann.\n\nNew input: Who am I?"
	if got := m.Requests()[1].Text(); !strings.Contains(got, want) {
		t.Errorf("second prompt lacks %q:\n%s", want, got)
	}
}

// TestExecutorFailures: a model error, an exhausted script and a tool error
// each end the executor's run with that error; max iterations stop it.
func TestExecutorFailures(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		steps   []scripted.Step
		toolErr error
		opts    []agents.Option
		want    error
	}{
		{name: "model error", steps: []scripted.Step{scripted.Fail(boom)}, want: boom},
		{name: "script exhausted", steps: []scripted.Step{scripted.FunctionsCall("shout", "x")}, want: scripted.ErrExhausted},
		{name: "tool error", steps: []scripted.Step{scripted.FunctionsCall("shout", "x")}, toolErr: boom, want: boom},
		{
			name:  "max iterations",
			steps: []scripted.Step{scripted.FunctionsCall("shout", "1"), scripted.FunctionsCall("shout", "2")},
			opts:  []agents.Option{agents.WithMaxIterations(2)},
			want:  agents.ErrNotFinished,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := scripted.New(tt.steps...)
			agent := agents.NewOpenAIFunctionsAgent(m, []tools.Tool{&shout{err: tt.toolErr}})
			_, err := chains.Run(context.Background(), agents.NewExecutor(agent, tt.opts...), "go")
			if !errors.Is(err, tt.want) {
				t.Errorf("Run error = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestStreamingCallbacks: the text agents hand the model a streaming function
// when the agent has a callbacks handler, and the scripted model streams its
// text reply through it.
func TestStreamingCallbacks(t *testing.T) {
	h := &streamRecorder{}
	m := scripted.New(scripted.ReActFinal("streamed"))
	agent := agents.NewOneShotAgent(m, nil, agents.WithCallbacksHandler(h))
	if _, err := chains.Run(context.Background(), agents.NewExecutor(agent), "go"); err != nil {
		t.Fatal(err)
	}
	if got := h.text(); got != "Final Answer: streamed" {
		t.Errorf("streamed %q", got)
	}
	if !m.Requests()[0].Options.Streaming {
		t.Error("request not marked Streaming")
	}
}

type streamRecorder struct {
	callbacks.SimpleHandler
	mu  sync.Mutex
	buf strings.Builder
}

func (r *streamRecorder) HandleStreamingFunc(_ context.Context, chunk []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf.Write(chunk)
}

func (r *streamRecorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.String()
}

func jsonEqual(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
