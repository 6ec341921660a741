package langchaingo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
	"go.uber.org/goleak"

	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// guard bounds every wait on a channel the test controls: it is never used
// to sequence anything, only to turn a hang into a failure.
const guard = 10 * time.Second

// spy counts the calls that reach a model: wrapped under the adapter's
// Model, it sees only requests that passed the boundary (guidance,
// cooperative cancel). It delegates even when ctx is done, so a call made
// after a cancel would be counted.
type spy struct {
	inner llms.Model
	n     atomic.Int32
}

func (s *spy) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	s.n.Add(1)
	return s.inner.GenerateContent(ctx, msgs, opts...)
}

func (s *spy) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, s, prompt, opts...)
}

func (s *spy) calls() int { return int(s.n.Load()) }

// funcTool is a plain langchaingo tool.
type funcTool struct {
	name, desc string
	fn         func(ctx context.Context, input string) (string, error)
}

func (f funcTool) Name() string                                        { return f.name }
func (f funcTool) Description() string                                 { return f.desc }
func (f funcTool) Call(ctx context.Context, in string) (string, error) { return f.fn(ctx, in) }

func constTool(name, out string) funcTool {
	return funcTool{name: name, desc: "Returns a constant.", fn: func(context.Context, string) (string, error) { return out, nil }}
}

// toolLog records every call of the tools it wraps, in order.
type toolLog struct {
	mu    sync.Mutex
	calls []toolCall
}

type toolCall struct {
	name, input, output string
	err                 error
}

type loggedTool struct {
	tools.Tool
	log *toolLog
}

func (l loggedTool) Call(ctx context.Context, in string) (string, error) {
	out, err := l.Tool.Call(ctx, in)
	l.log.mu.Lock()
	l.log.calls = append(l.log.calls, toolCall{l.Name(), in, out, err})
	l.log.mu.Unlock()
	return out, err
}

func (l *toolLog) wrap(ts []tools.Tool) []tools.Tool {
	out := make([]tools.Tool, len(ts))
	for i, t := range ts {
		out[i] = loggedTool{Tool: t, log: l}
	}
	return out
}

func (l *toolLog) all() []toolCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]toolCall(nil), l.calls...)
}

// outputs returns the outputs of the calls of tool name, in order.
func (l *toolLog) outputs(name string) []string {
	var out []string
	for _, c := range l.all() {
		if c.name == name {
			out = append(out, c.output)
		}
	}
	return out
}

var refRE = regexp.MustCompile(`^\{"kind":"work\.ref","id":"([0-9a-f]{32})","targetId":"([^"]+)","guarantees":\{"execution":"process-local","rejoin":"process-local"\}\}$`)

// refID returns the id in the exact Ref JSON of a launch of target, or "".
func refID(out, target string) string {
	m := refRE.FindStringSubmatch(out)
	if m == nil || m[2] != target {
		return ""
	}
	return m[1]
}

// wantRef checks that out is exactly the Ref JSON of a launch of target and
// returns the id.
func wantRef(t *testing.T, out, target string) string {
	t.Helper()
	id := refID(out, target)
	if id == "" {
		t.Fatalf("launch of %s returned %q, want the exact work.ref JSON", target, out)
	}
	want := fmt.Sprintf(`{"kind":"work.ref","id":%q,"targetId":%q,"guarantees":{"execution":"process-local","rejoin":"process-local"}}`, id, target)
	if out != want {
		t.Fatalf("launch of %s returned %q, want %q", target, out, want)
	}
	return id
}

// recv waits for ch to be closed (or to deliver); it reports false, after
// recording an error, when the guard expires first. Safe off the test
// goroutine.
func recv(t *testing.T, ch <-chan struct{}, what string) bool {
	select {
	case <-ch:
		return true
	case <-time.After(guard):
		t.Errorf("timed out waiting for %s", what)
		return false
	}
}

// closeSup closes sup and checks that every child goroutine returned.
func closeSup(t *testing.T, sup *work.Engine) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if err := sup.Close(ctx); err != nil {
		t.Errorf("Engine.Close: %v", err)
	}
}

// decode decodes a JSON object.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not a JSON object: %q: %v", s, err)
	}
	return m
}

// js encodes v as JSON.
func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// agentKind is one of langchaingo's three agents, as a coordinator and as a
// child, with the scripted steps that drive it.
type agentKind struct {
	name string
	// agent builds the agent; prefix, when set, is a marker put in its
	// system prompt (OpenAIFunctions) or prompt prefix (text agents).
	agent func(m llms.Model, ts []tools.Tool, prefix string) agents.Agent
	// call makes the agent call tool with input (raw JSON arguments for
	// OpenAIFunctions, the "Action Input:" text for the text agents).
	call func(tool, input string) scripted.Step
	// childCall is how a child of this kind calls its own tool.
	childCall func(tool, input string) scripted.Step
	// final makes the agent finish with exactly answer.
	final func(answer string) scripted.Step
	text  bool
}

var kinds = []agentKind{
	{
		name: "OneShot",
		agent: func(m llms.Model, ts []tools.Tool, prefix string) agents.Agent {
			var opts []agents.Option
			if prefix != "" {
				opts = append(opts, agents.WithPromptPrefix(prefix+" You have access to the following tools:\n\n{{.tool_descriptions}}"))
			}
			return agents.NewOneShotAgent(m, ts, opts...)
		},
		call:      scripted.ReActCall,
		childCall: scripted.ReActCall,
		final:     scripted.ReActFinal,
		text:      true,
	},
	{
		name: "Conversational",
		agent: func(m llms.Model, ts []tools.Tool, prefix string) agents.Agent {
			var opts []agents.Option
			if prefix != "" {
				opts = append(opts, agents.WithPromptPrefix(prefix+"\n\nTOOLS:\n------\n\nAssistant has access to the following tools:\n\n{{.tool_descriptions}}"))
			}
			return agents.NewConversationalAgent(m, ts, opts...)
		},
		call:      scripted.ConversationalCall,
		childCall: scripted.ConversationalCall,
		final:     scripted.ConversationalFinal,
		text:      true,
	},
	{
		name: "OpenAIFunctions",
		agent: func(m llms.Model, ts []tools.Tool, prefix string) agents.Agent {
			var opts []agents.Option
			if prefix != "" {
				opts = append(opts, agents.NewOpenAIOption().WithSystemMessage(prefix))
			}
			return agents.NewOpenAIFunctionsAgent(m, ts, opts...)
		},
		call:      scripted.ToolCall,
		childCall: scripted.FunctionsCall,
		final:     scripted.Text,
	},
}

func kindNamed(name string) agentKind {
	for _, k := range kinds {
		if k.name == name {
			return k
		}
	}
	panic("no agent kind " + name)
}

// workTool returns the work tool of ts.
func workTool(t *testing.T, ts []tools.Tool) tools.Tool {
	t.Helper()
	for _, x := range ts {
		if x.Name() == "work" {
			return x
		}
	}
	t.Fatal("no work tool")
	return nil
}

// toolNamed returns the tool of ts named name.
func toolNamed(t *testing.T, ts []tools.Tool, name string) tools.Tool {
	t.Helper()
	for _, x := range ts {
		if x.Name() == name {
			return x
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

// callOK calls tool and fails the test on a Go error.
func callOK(t *testing.T, ctx context.Context, tool tools.Tool, input string) string {
	t.Helper()
	out, err := tool.Call(ctx, input)
	if err != nil {
		t.Fatalf("%s(%s) returned a Go error: %v", tool.Name(), input, err)
	}
	return out
}

// awaitState waits (woken by settlement, not polling) until the Work is
// terminal and returns its state.
func awaitState(t *testing.T, sup *work.Engine, owner work.Owner, id string) observe.State {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	for {
		st, _, err := sup.Result(ctx, owner, id, work.MaxResultWait)
		if err != nil {
			t.Fatalf("Result(%s): %v", id, err)
		}
		if st.State.Terminal() {
			return st.State
		}
		if ctx.Err() != nil {
			t.Fatalf("work %s still %s", id, st.State)
		}
	}
}

// eventOf returns the first event of type typ that rec recorded for the
// Work id. Call it once the Work is terminal (awaitState): a terminal
// Result is never ahead of the Observer, so the event is there by then.
func eventOf(t *testing.T, rec *enginetest.Recorder, id string, typ observe.EventType) observe.Event {
	t.Helper()
	for _, e := range rec.Events() {
		if e.WorkID == id && e.Type == typ {
			return e
		}
	}
	t.Fatalf("no %s event for work %s", typ, id)
	return observe.Event{}
}

// contains reports whether any message of req contains s.
func contains(req scripted.Request, s string) bool { return strings.Contains(req.Text(), s) }

const arg1Schema = `{"type":"object","properties":{"__arg1":{"title":"__arg1","type":"string"}},"required":["__arg1"]}`

type schemer interface{ Schema() map[string]any }
