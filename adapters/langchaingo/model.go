package langchaingo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/agentwork/agentwork/middleware"
)

// Model wraps an llms.Model for one agent instance. On every GenerateContent
// it, in order:
//
//  1. if ctx is a child's (a background or foreground child run), returns
//     the context's error when the child's Work was cancelled or its
//     deadline passed (cooperative cancel at the boundary), else appends the
//     child's queued guidance, framed, as a final user message;
//  2. if the Model belongs to a Kit (a coordinator), appends the owner's
//     status block as a final user message when the owner has visible Work;
//  3. when the request carries function definitions (a function-calling
//     agent: OpenAIFunctionsAgent passes Functions only), passes them as
//     Tools as well as Functions, so that clients that read only Tools
//     (anthropic, googleai) declare them; langchaingo's OpenAI client, which
//     turns both into tools and would declare each twice, gets Functions
//     only. A coordinator's Model first replaces the fixed __arg1 schema of
//     the work tool and of prepared children with their real JSON schemas.
//     A client that sends no tools at all (langchaingo v0.1.14's
//     llms/ollama) fails the request with ErrToolsNotSent instead of
//     running the agent without tools;
//  4. replays every earlier tool call with JSON-object arguments:
//     OpenAIFunctionsAgent replays an ordinary tool's call with the
//     unwrapped __arg1 string as its arguments, which the anthropic client
//     cannot send (it decodes them as JSON and fails the request); such
//     arguments are sent as {"__arg1": <string>}, what the model wrote;
//  5. merges a reply split into several choices (anthropic gives each
//     content block its own choice: text, then one per tool_use) into one
//     choice holding every tool call, the texts joined with "\n", so that
//     no call is lost and text before a call does not end the run. A
//     request that asks for several alternatives (llms.WithN > 1) is left
//     as it is.
//
// Wrappers around a client (logging, tracing, retries) must expose it with
// an Unwrap() llms.Model method to be recognised in step 3.
//
// It never mutates the caller's slice and never adds a system message or a
// cache mark. It is safe for concurrent use.
type Model struct {
	inner llms.Model
	kit   *Kit // nil for a child's model
	// The tool options of the last request's function definitions: an
	// agent sends the same definitions on every request.
	tools atomic.Pointer[toolCache]
}

// toolCache is what toolOptions made of one list of function definitions.
type toolCache struct {
	fns  []llms.FunctionDefinition // the request's, as given
	opts []llms.CallOption         // WithFunctions and WithTools
}

var _ llms.Model = (*Model)(nil)

// ErrToolsNotSent is returned (wrapped, with what to use instead) when a
// function-calling agent would run on a client that sends no tools to the
// model: langchaingo v0.1.14's llms/ollama drops them (and refuses the
// agent's tool-call messages). Use langchaingo's OpenAI client at Ollama's
// OpenAI-compatible endpoint instead. Prepare, Retrofit and FromExecutor
// report it when they can see the agent; a coordinator's Model reports it
// on the agent's first request.
var ErrToolsNotSent = errors.New("langchaingo: this client sends no tools to the model")

// errToolsNotSent explains ErrToolsNotSent for a client.
func errToolsNotSent(m llms.Model) error {
	return fmt.Errorf("%w: %T (langchaingo v0.1.14's llms/ollama) drops the tools of a function-calling agent such as OpenAIFunctionsAgent, which would run with none; "+
		"use langchaingo's OpenAI client at Ollama's OpenAI-compatible endpoint: openai.New(openai.WithBaseURL(\"http://<ollama host>/v1\"), openai.WithModel(<model>), openai.WithToken(\"ollama\")), "+
		"or a text agent (OneShot, Conversational), which writes its tools into the prompt", ErrToolsNotSent, innermost(m))
}

// WrapModel wraps a child's model so that it delivers guidance, stops at
// the boundary when its Work is cancelled, passes function definitions as
// Tools as well and merges split replies (steps 1, 3 and 4 of Model).
// FromExecutor and NewAgent do this for langchaingo's three agents; use
// WrapModel for others.
func WrapModel(m llms.Model) *Model {
	if w, ok := m.(*Model); ok {
		return w
	}
	return &Model{inner: m}
}

// Unwrap returns the wrapped model.
func (m *Model) Unwrap() llms.Model { return m.inner }

// Call implements llms.Model's single-prompt call through GenerateContent.
func (m *Model) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// GenerateContent implements llms.Model as the type comment describes.
func (m *Model) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var extra []llms.MessageContent
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, err := begin(ctx)
	if err != nil {
		return nil, err
	}
	var co llms.CallOptions
	for _, o := range opts {
		o(&co)
	}
	if len(co.Functions) > 0 || len(co.Tools) > 0 {
		if !sendsTools(m.inner) {
			return nil, errToolsNotSent(m.inner)
		}
		dropped := false
		if b.turn.Final {
			opts, dropped = finalOptions(m.inner, opts, msgs)
		}
		if !dropped {
			opts = m.toolOptions(opts, co)
		}
	}
	countModelRequest(ctx)
	if g := middleware.Guidance(ctx); g != "" {
		extra = append(extra, llms.TextParts(llms.ChatMessageTypeHuman, g))
	}
	if b.turn.Final {
		extra = append(extra, llms.TextParts(llms.ChatMessageTypeHuman, finalText(b.turn.Budget)))
	}
	if m.kit != nil {
		block, rows := m.kit.set.StatusBlockRows(ctx)
		if block != "" {
			extra = append(extra, llms.TextParts(llms.ChatMessageTypeHuman, block))
			m.kit.shown(rows)
		}
	}
	msgs = objectArguments(msgs)
	if len(extra) > 0 {
		msgs = append(msgs[:len(msgs):len(msgs)], extra...)
	}
	resp, err := m.inner.GenerateContent(ctx, msgs, opts...)
	if err == nil && co.N <= 1 {
		resp = mergeChoices(resp)
	}
	if err == nil {
		resp = b.end(ctx, resp)
	}
	if m.kit != nil {
		m.kit.ids.step(resp)
	}
	return resp, err
}

// toolOptions passes the request's function definitions (with real
// schemas on a coordinator) as Functions, and as Tools except to the OpenAI
// client. A child's request that carries only Tools is left as it is.
func (m *Model) toolOptions(opts []llms.CallOption, co llms.CallOptions) []llms.CallOption {
	fns := co.Functions
	if len(fns) == 0 {
		if m.kit == nil {
			return opts
		}
		for _, t := range co.Tools {
			if t.Function != nil {
				fns = append(fns, *t.Function)
			}
		}
	}
	if c := m.tools.Load(); c != nil && sameFunctions(c.fns, fns) {
		return append(opts[:len(opts):len(opts)], c.opts...)
	}
	out := make([]llms.FunctionDefinition, len(fns))
	ts := make([]llms.Tool, len(fns))
	for i, f := range fns {
		if m.kit != nil {
			if s, ok := m.kit.schemas[strings.ToUpper(f.Name)]; ok {
				f.Parameters = s
			}
		}
		out[i] = f
		ts[i] = llms.Tool{Type: "function", Function: &out[i]}
	}
	add := []llms.CallOption{llms.WithFunctions(out), llms.WithTools(ts)}
	if isOpenAI(m.inner) {
		// langchaingo's OpenAI client sends Functions and Tools both as
		// tools: passing both would declare every tool twice, so any Tools
		// the caller passed are cleared.
		add[1] = llms.WithTools(nil)
	}
	m.tools.Store(&toolCache{fns: slices.Clone(fns), opts: add})
	return append(opts[:len(opts):len(opts)], add...)
}

// sameFunctions reports whether two lists of function definitions are
// equal, comparing parameters as JSON values (an agent rebuilds them on
// every request). Values it cannot compare make them differ.
func sameFunctions(a, b []llms.FunctionDefinition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || a[i].Strict != b[i].Strict ||
			!sameJSON(a[i].Parameters, b[i].Parameters) {
			return false
		}
	}
	return true
}

// sameJSON compares the JSON-like values a schema is built from without
// allocating; anything else compares unequal.
func sameJSON(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case int:
		y, ok := b.(int)
		return ok && x == y
	case []string:
		y, ok := b.([]string)
		return ok && slices.Equal(x, y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]string:
		y, ok := b.(map[string]string)
		return ok && maps.Equal(x, y)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameJSON(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// objectArguments returns msgs with every tool call's arguments a JSON
// object: others become {"__arg1": arguments}. msgs is copied only when a
// call changes.
func objectArguments(msgs []llms.MessageContent) []llms.MessageContent {
	out := msgs
	copied := false
	for i, m := range msgs {
		partsCopied := false
		for j, p := range m.Parts {
			tc, ok := p.(llms.ToolCall)
			if !ok || tc.FunctionCall == nil || isJSONObject(tc.FunctionCall.Arguments) {
				continue
			}
			if !copied {
				out = append([]llms.MessageContent(nil), msgs...)
				copied = true
			}
			if !partsCopied {
				out[i].Parts = append([]llms.ContentPart(nil), m.Parts...)
				partsCopied = true
			}
			fc := *tc.FunctionCall
			b, _ := json.Marshal(fc.Arguments) // a string: cannot fail
			fc.Arguments = `{"__arg1":` + string(b) + "}"
			tc.FunctionCall = &fc
			out[i].Parts[j] = tc
		}
	}
	return out
}

func isJSONObject(s string) bool {
	s = strings.TrimLeft(s, " \t\r\n")
	if !strings.HasPrefix(s, "{") {
		return false // fast path: not an object, nothing to decode
	}
	var v map[string]json.RawMessage
	return json.Unmarshal([]byte(s), &v) == nil && v != nil
}

// mergeChoices merges a reply split into several choices into one.
func mergeChoices(resp *llms.ContentResponse) *llms.ContentResponse {
	if resp == nil || len(resp.Choices) < 2 {
		return resp
	}
	merged := &llms.ContentChoice{}
	var texts, reasoning []string
	for _, c := range resp.Choices {
		if c == nil {
			continue
		}
		if c.Content != "" {
			texts = append(texts, c.Content)
		}
		if c.ReasoningContent != "" {
			reasoning = append(reasoning, c.ReasoningContent)
		}
		merged.ToolCalls = append(merged.ToolCalls, c.ToolCalls...)
		if merged.FuncCall == nil {
			merged.FuncCall = c.FuncCall
		}
		if c.StopReason != "" {
			merged.StopReason = c.StopReason
		}
		for k, v := range c.GenerationInfo {
			if merged.GenerationInfo == nil {
				merged.GenerationInfo = map[string]any{}
			}
			if _, ok := merged.GenerationInfo[k]; !ok || isZero(merged.GenerationInfo[k]) {
				merged.GenerationInfo[k] = v
			}
		}
	}
	merged.Content = strings.Join(texts, "\n")
	merged.ReasoningContent = strings.Join(reasoning, "\n")
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{merged}}
}

func isZero(v any) bool { return v == nil || v == "" || v == 0 }

// isOpenAI reports whether m is langchaingo's OpenAI client, seeing through
// wrappers (logging, tracing, retries) that expose it with an
// Unwrap() llms.Model method.
func isOpenAI(m llms.Model) bool {
	_, ok := innermost(m).(*openai.LLM)
	return ok
}

// sendsTools reports whether m's client sends tools to the model:
// langchaingo v0.1.14's llms/ollama does not.
func sendsTools(m llms.Model) bool {
	_, ok := innermost(m).(*ollama.LLM)
	return !ok
}

// innermost follows Unwrap() llms.Model methods (at most 32).
func innermost(m llms.Model) llms.Model {
	for range 32 {
		u, ok := m.(interface{ Unwrap() llms.Model })
		if !ok {
			return m
		}
		next := u.Unwrap()
		if next == nil {
			return m
		}
		m = next
	}
	return m
}

// callIDs assigns tool-call identities: the ids the provider issued in the
// model's last response (OpenAIFunctionsAgent's tool calls), matched to
// the tool calls by name in order, each used once. A call with no
// provider-issued id (a text agent's: OneShot, Conversational) gets none:
// such a call is never deduplicated and reports no gen_ai.tool.call.id. No
// id is ever made up: a counter-based one would repeat across Kits with the
// same owner, or across executors sharing a Kit, and make one launch replay
// another's.
type callIDs struct {
	mu      sync.Mutex
	pending []pendingCall
}

type pendingCall struct{ name, id string }

func (c *callIDs) step(resp *llms.ContentResponse) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = c.pending[:0]
	if resp == nil || len(resp.Choices) == 0 {
		return
	}
	for _, tc := range resp.Choices[0].ToolCalls {
		if tc.FunctionCall != nil && tc.ID != "" {
			c.pending = append(c.pending, pendingCall{tc.FunctionCall.Name, tc.ID})
		}
	}
}

// next returns the provider-issued identity of the next call of the tool
// named name, or "" when it has none.
func (c *callIDs) next(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, p := range c.pending {
		if strings.EqualFold(p.name, name) {
			c.pending = c.pending[i+1:]
			return p.id
		}
	}
	return ""
}
