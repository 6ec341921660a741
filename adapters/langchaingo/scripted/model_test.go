package scripted_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"go.uber.org/goleak"

	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func human(text string) []llms.MessageContent {
	return []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, text)}
}

func TestGenerateContentReplies(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		step    scripted.Step
		want    *llms.ContentChoice // nil when an error is wanted
		wantErr string              // substring
		errIs   error
	}{
		{
			name: "text",
			step: scripted.Text("hello"),
			want: &llms.ContentChoice{Content: "hello", StopReason: "stop"},
		},
		{
			name: "one tool call",
			step: scripted.ToolCall("search", `{"q":"go"}`),
			want: &llms.ContentChoice{
				StopReason: "tool_calls",
				FuncCall:   &llms.FunctionCall{Name: "search", Arguments: `{"q":"go"}`},
				ToolCalls: []llms.ToolCall{{
					ID: "call_1_1", Type: "function",
					FunctionCall: &llms.FunctionCall{Name: "search", Arguments: `{"q":"go"}`},
				}},
			},
		},
		{
			name: "several tool calls, one with its own id",
			step: scripted.ToolCalls(scripted.Call{Name: "a", Arguments: "{}"}, scripted.Call{ID: "x", Name: "b", Arguments: "raw"}),
			want: &llms.ContentChoice{
				StopReason: "tool_calls",
				FuncCall:   &llms.FunctionCall{Name: "a", Arguments: "{}"},
				ToolCalls: []llms.ToolCall{
					{ID: "call_1_1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "a", Arguments: "{}"}},
					{ID: "x", Type: "function", FunctionCall: &llms.FunctionCall{Name: "b", Arguments: "raw"}},
				},
			},
		},
		{
			name: "functions call wraps the input in __arg1",
			step: scripted.FunctionsCall("search", `say "hi"`),
			want: &llms.ContentChoice{
				StopReason: "tool_calls",
				FuncCall:   &llms.FunctionCall{Name: "search", Arguments: `{"__arg1":"say \"hi\""}`},
				ToolCalls: []llms.ToolCall{{
					ID: "call_1_1", Type: "function",
					FunctionCall: &llms.FunctionCall{Name: "search", Arguments: `{"__arg1":"say \"hi\""}`},
				}},
			},
		},
		{
			name: "func decides from the request",
			step: scripted.Func(func(r scripted.Request) scripted.Step { return scripted.Text("saw " + r.Text()) }),
			want: &llms.ContentChoice{Content: "saw ping", StopReason: "stop"},
		},
		{name: "fail", step: scripted.Fail(boom), errIs: boom},
		{name: "fail with nil error", step: scripted.Fail(nil), wantErr: "scripted failure"},
		{name: "zero step", step: scripted.Step{}, wantErr: "zero Step"},
		{name: "no tool calls", step: scripted.ToolCalls(), wantErr: "ToolCalls has no calls"},
		{name: "nil func", step: scripted.Func(nil), wantErr: "nil function"},
		{
			name:    "func returning a func",
			step:    scripted.Func(func(scripted.Request) scripted.Step { return scripted.Func(nil) }),
			wantErr: "returned another Func step",
		},
		{
			name:    "func returning the zero step",
			step:    scripted.Func(func(scripted.Request) scripted.Step { return scripted.Step{} }),
			wantErr: "returned the zero Step",
		},
		{
			name:    "func returning an invalid helper",
			step:    scripted.Func(func(scripted.Request) scripted.Step { return scripted.ConversationalFinal("AI: x") }),
			wantErr: "ConversationalAgent would not read",
		},
		{
			name:  "func returning fail",
			step:  scripted.Func(func(scripted.Request) scripted.Step { return scripted.Fail(boom) }),
			errIs: boom,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := scripted.New(tt.step)
			resp, err := m.GenerateContent(context.Background(), human("ping"))
			if tt.want == nil {
				if err == nil {
					t.Fatalf("err = nil, want an error (%q / %v)", tt.wantErr, tt.errIs)
				}
				if tt.errIs != nil && !errors.Is(err, tt.errIs) {
					t.Errorf("err = %v, want %v", err, tt.errIs)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err = %q, want it to contain %q", err, tt.wantErr)
				}
			} else {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				if len(resp.Choices) != 1 {
					t.Fatalf("%d choices, want 1", len(resp.Choices))
				}
				if got := fmt.Sprintf("%+v", deref(resp.Choices[0])); got != fmt.Sprintf("%+v", deref(tt.want)) {
					t.Errorf("choice = %s\nwant     %s", got, fmt.Sprintf("%+v", deref(tt.want)))
				}
			}
			if n := len(m.Requests()); n != 1 {
				t.Errorf("recorded %d requests, want 1", n)
			}
		})
	}
}

// deref renders a choice with its pointers followed, for comparison.
func deref(c *llms.ContentChoice) string {
	s := fmt.Sprintf("content=%q stop=%q", c.Content, c.StopReason)
	if c.FuncCall != nil {
		s += fmt.Sprintf(" func=%+v", *c.FuncCall)
	}
	for _, tc := range c.ToolCalls {
		s += fmt.Sprintf(" tool=%s/%s/%+v", tc.ID, tc.Type, *tc.FunctionCall)
	}
	return s
}

func TestStepsInOrderThenExhausted(t *testing.T) {
	m := scripted.New(scripted.Text("one"), scripted.ToolCall("t", "{}"))
	ctx := context.Background()
	if got, err := m.Call(ctx, "a"); err != nil || got != "one" {
		t.Fatalf("first = %q, %v", got, err)
	}
	resp, err := m.GenerateContent(ctx, human("b"))
	if err != nil || resp.Choices[0].ToolCalls[0].ID != "call_2_1" {
		t.Fatalf("second = %+v, %v; want tool call call_2_1", resp, err)
	}
	if n := m.Remaining(); n != 0 {
		t.Errorf("Remaining = %d, want 0", n)
	}
	_, err = m.Call(ctx, "c")
	if !errors.Is(err, scripted.ErrExhausted) || !strings.Contains(err.Error(), "request 2 arrived after all 2 scripted steps") {
		t.Errorf("third: err = %v, want ErrExhausted", err)
	}
	m.Append(scripted.Text("four"))
	if got, err := m.Call(ctx, "d"); err == nil {
		t.Errorf("fourth = %q; want ErrExhausted: the exhausted request used up position 2", got)
	}
	if n := len(m.Requests()); n != 4 {
		t.Errorf("recorded %d requests, want 4", n)
	}
}

func TestZeroModel(t *testing.T) {
	var m scripted.Model
	if _, err := m.Call(context.Background(), "x"); !errors.Is(err, scripted.ErrExhausted) {
		t.Errorf("err = %v, want ErrExhausted", err)
	}
	m.Append(scripted.Text("late"))
	if m.Remaining() != 0 {
		t.Errorf("Remaining = %d, want 0", m.Remaining())
	}
}

func TestAppend(t *testing.T) {
	m := scripted.New()
	m.Append(scripted.Text("a"), scripted.Text("b"))
	if m.Remaining() != 2 {
		t.Fatalf("Remaining = %d, want 2", m.Remaining())
	}
	for _, want := range []string{"a", "b"} {
		if got, err := m.Call(context.Background(), "x"); err != nil || got != want {
			t.Errorf("Call = %q, %v; want %q", got, err, want)
		}
	}
}

func TestDoneContext(t *testing.T) {
	m := scripted.New(scripted.Text("kept"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.GenerateContent(ctx, human("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if len(m.Requests()) != 0 || m.Remaining() != 1 {
		t.Errorf("a cancelled call was recorded or used a step")
	}
	if got, err := m.Call(context.Background(), "x"); err != nil || got != "kept" {
		t.Errorf("next Call = %q, %v", got, err)
	}
}

func TestStreaming(t *testing.T) {
	tests := []struct {
		name      string
		step      scripted.Step
		streamErr error
		wantChunk []string
		wantErr   bool
	}{
		{name: "text is streamed once", step: scripted.Text("abc"), wantChunk: []string{"abc"}},
		{name: "empty text is not streamed", step: scripted.Text(""), wantChunk: nil},
		{name: "tool calls are not streamed", step: scripted.ToolCall("t", "{}"), wantChunk: nil},
		{name: "stream error is returned", step: scripted.Text("abc"), streamErr: errors.New("stop"), wantChunk: []string{"abc"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var chunks []string
			stream := func(_ context.Context, b []byte) error {
				chunks = append(chunks, string(b))
				return tt.streamErr
			}
			_, err := scripted.New(tt.step).GenerateContent(context.Background(), human("x"), llms.WithStreamingFunc(stream))
			if (err != nil) != tt.wantErr {
				t.Errorf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !slices.Equal(chunks, tt.wantChunk) {
				t.Errorf("chunks = %q, want %q", chunks, tt.wantChunk)
			}
		})
	}
}

func TestRequestRecord(t *testing.T) {
	params := map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "sys"),
		{Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{
			llms.TextContent{Text: "a"},
			llms.WithCacheControl(llms.TextContent{Text: "b"}, &llms.CacheControl{Type: "ephemeral"}),
			llms.ImageURLContent{URL: "http://img"},
			llms.BinaryContent{MIMEType: "image/png", Data: []byte{1}},
		}},
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{
			llms.ToolCall{ID: "c1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "f", Arguments: "{}"}},
		}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "c1", Name: "f", Content: "out"}}},
	}
	toolChoice := llms.ToolChoice{Type: "function", Function: &llms.FunctionReference{Name: "f"}}
	metadata := map[string]any{"k": "v", "nested": map[string]any{"n": 1}}
	stop := []string{"STOP"}
	m := scripted.New(scripted.Text("ok"))
	_, err := m.GenerateContent(context.Background(), msgs,
		llms.WithTools([]llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "t", Description: "tool t", Parameters: params, Strict: true}}}),
		llms.WithFunctions([]llms.FunctionDefinition{{Name: "f", Description: "fn f"}}),
		llms.WithModel("m1"), llms.WithMaxTokens(7), llms.WithTemperature(0.5), llms.WithStopWords(stop),
		llms.WithToolChoice(toolChoice), llms.WithMetadata(metadata), llms.WithJSONMode(),
	)
	if err != nil {
		t.Fatal(err)
	}

	// Mutating everything the caller passed must not change the record.
	msgs[0].Parts[0] = llms.TextContent{Text: "changed"}
	params["type"] = "changed"
	metadata["nested"].(map[string]any)["n"] = 2
	stop[0] = "changed"
	toolChoice.Function.Name = "changed"

	r := m.Requests()[0]
	wantParts := [][]scripted.Part{
		{{Kind: scripted.PartText, Text: "sys"}},
		{
			{Kind: scripted.PartText, Text: "a"},
			{Kind: scripted.PartText, Text: "b", Cached: true},
			{Kind: scripted.PartImageURL, Text: "http://img"},
			{Kind: scripted.PartBinary, MIMEType: "image/png"},
		},
		{{Kind: scripted.PartToolCall, ToolCallID: "c1", Name: "f", Arguments: "{}"}},
		{{Kind: scripted.PartToolResponse, ToolCallID: "c1", Name: "f", Text: "out"}},
	}
	wantRoles := []llms.ChatMessageType{"system", "human", "ai", "tool"}
	for i, msg := range r.Messages {
		if msg.Role != wantRoles[i] || !slices.Equal(msg.Parts, wantParts[i]) {
			t.Errorf("message %d = %+v, want %s %+v", i, msg, wantRoles[i], wantParts[i])
		}
	}
	if got, want := r.Text(), "sys\nab\n\nout"; got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
	if got := r.LastMessage().Text(); got != "out" {
		t.Errorf("LastMessage.Text = %q", got)
	}
	if got := r.ToolNames(); !slices.Equal(got, []string{"t", "f"}) {
		t.Errorf("ToolNames = %q", got)
	}
	tool := r.Tools[0]
	if tool.Type != "function" || tool.Name != "t" || tool.Description != "tool t" || !tool.Strict ||
		string(tool.Parameters) != `{"properties":{"q":{"type":"string"}},"type":"object"}` {
		t.Errorf("tool = %+v (%s)", tool, tool.Parameters)
	}
	if f := r.Functions[0]; f.Type != "" || f.Name != "f" || f.Parameters != nil {
		t.Errorf("function = %+v", f)
	}
	o := r.Options
	if o.Model != "m1" || o.MaxTokens != 7 || o.Temperature != 0.5 || !o.JSONMode || o.Streaming ||
		!slices.Equal(o.StopWords, []string{"STOP"}) {
		t.Errorf("options = %+v", o)
	}
	if fmt.Sprint(o.ToolChoice) != "map[function:map[name:f] type:function]" {
		t.Errorf("ToolChoice = %v", o.ToolChoice)
	}
	if fmt.Sprint(o.Metadata) != "map[k:v nested:map[n:1]]" {
		t.Errorf("Metadata = %v", o.Metadata)
	}

	// Mutating a returned Request must not change the record either.
	r.Messages[0].Parts[0].Text = "mutated"
	r.Tools[0].Parameters[0] = 'X'
	r.Options.StopWords[0] = "mutated"
	r.Options.Metadata["nested"].(map[string]any)["n"] = "mutated"
	r.Options.ToolChoice.(map[string]any)["type"] = "mutated"
	again := m.Requests()[0]
	if again.Messages[0].Parts[0].Text != "sys" || again.Tools[0].Parameters[0] != '{' ||
		again.Options.StopWords[0] != "STOP" || fmt.Sprint(again.Options.Metadata) != "map[k:v nested:map[n:1]]" ||
		fmt.Sprint(again.Options.ToolChoice) != "map[function:map[name:f] type:function]" {
		t.Errorf("a returned Request shares memory with the record: %+v", again)
	}
}

func TestUnencodableParameters(t *testing.T) {
	m := scripted.New(scripted.Text("unused"))
	_, err := m.GenerateContent(context.Background(), human("x"),
		llms.WithFunctions([]llms.FunctionDefinition{{Name: "bad", Parameters: func() {}}}))
	if err == nil || !strings.Contains(err.Error(), `parameters of "bad" are not JSON`) {
		t.Errorf("err = %v", err)
	}
	if m.Remaining() != 1 || len(m.Requests()) != 0 {
		t.Errorf("a rejected call used a step or was recorded")
	}
}

func TestFuncMayUseTheModel(t *testing.T) {
	var m *scripted.Model
	m = scripted.New(
		scripted.Text("first"),
		scripted.Func(func(r scripted.Request) scripted.Step {
			// Runs outside the model's lock: no deadlock.
			m.Append(scripted.Text("appended"))
			return scripted.Text(fmt.Sprintf("request %d, %d recorded", r.Index, len(m.Requests())))
		}),
	)
	ctx := context.Background()
	for _, want := range []string{"first", "request 1, 2 recorded", "appended"} {
		if got, err := m.Call(ctx, "x"); err != nil || got != want {
			t.Errorf("Call = %q, %v; want %q", got, err, want)
		}
	}
}

// TestConcurrentUse: every step is used exactly once and every request is
// recorded, under -race.
func TestConcurrentUse(t *testing.T) {
	const n = 64
	steps := make([]scripted.Step, n)
	for i := range steps {
		if i%2 == 0 {
			steps[i] = scripted.Text(fmt.Sprint(i))
		} else {
			steps[i] = scripted.Func(func(r scripted.Request) scripted.Step { return scripted.Text(fmt.Sprint(r.Index)) })
		}
	}
	m := scripted.New(steps...)
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		got []int
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := m.Call(context.Background(), fmt.Sprint("caller ", i))
			if err != nil {
				t.Error(err)
				return
			}
			_ = m.Requests()
			_ = m.Remaining()
			v, err := strconv.Atoi(out)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			got = append(got, v)
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(got)
	for i, v := range got {
		if v != i {
			t.Fatalf("sorted replies = %v, want each of 0..%d once", got, n-1)
		}
	}
	reqs := m.Requests()
	if len(reqs) != n {
		t.Fatalf("recorded %d, want %d", len(reqs), n)
	}
	for i, r := range reqs {
		if r.Index != i {
			t.Errorf("Requests()[%d].Index = %d", i, r.Index)
		}
	}
}
