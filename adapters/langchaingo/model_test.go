package langchaingo_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/work"
)

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
