package langchaingo

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/tmc/langchaingo/llms"
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
//  3. when the request carries function definitions, replaces the fixed
//     __arg1 schema of the work tool and of prepared children with their
//     real JSON schemas, and passes them as Tools as well as Functions
//     (except to langchaingo's OpenAI client, which turns both into tools
//     and would declare each twice: it gets Functions only). A wrapper
//     around the OpenAI client must expose it with an Unwrap() llms.Model
//     method to be recognised.
//
// It never mutates the caller's slice and never adds a system message or a
// cache mark. It is safe for concurrent use.
type Model struct {
	inner llms.Model
	kit   *Kit // nil for a child's model
}

var _ llms.Model = (*Model)(nil)

// WrapModel wraps a child's model so that it delivers guidance and stops at
// the boundary when its Work is cancelled. FromExecutor and NewAgent do this
// for langchaingo's three agents; use WrapModel for others.
func WrapModel(m llms.Model) *Model {
	if w, ok := m.(*Model); ok {
		return w
	}
	return &Model{inner: m}
}

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
	countModelRequest(ctx)
	if g := middleware.Guidance(ctx); g != "" {
		extra = append(extra, llms.TextParts(llms.ChatMessageTypeHuman, g))
	}
	if m.kit != nil {
		if block := m.kit.set.StatusBlock(ctx); block != "" {
			extra = append(extra, llms.TextParts(llms.ChatMessageTypeHuman, block))
		}
		opts = m.kit.schemaOptions(opts)
	}
	if len(extra) > 0 {
		msgs = append(msgs[:len(msgs):len(msgs)], extra...)
	}
	resp, err := m.inner.GenerateContent(ctx, msgs, opts...)
	if m.kit != nil {
		m.kit.ids.step(resp)
	}
	return resp, err
}

// schemaOptions adds real schemas when the request has function
// definitions (the OpenAIFunctionsAgent's fixed __arg1 schema).
func (k *Kit) schemaOptions(opts []llms.CallOption) []llms.CallOption {
	var co llms.CallOptions
	for _, o := range opts {
		o(&co)
	}
	if len(co.Functions) == 0 && len(co.Tools) == 0 {
		return opts
	}
	fns := co.Functions
	if len(fns) == 0 {
		for _, t := range co.Tools {
			if t.Function != nil {
				fns = append(fns, *t.Function)
			}
		}
	}
	out := make([]llms.FunctionDefinition, len(fns))
	ts := make([]llms.Tool, len(fns))
	for i, f := range fns {
		if s, ok := k.schemas[strings.ToUpper(f.Name)]; ok {
			f.Parameters = s
		}
		out[i] = f
		ts[i] = llms.Tool{Type: "function", Function: &out[i]}
	}
	opts = append(opts[:len(opts):len(opts)], llms.WithFunctions(out))
	if isOpenAI(k.model.inner) {
		// langchaingo's OpenAI client sends Functions and Tools both as
		// tools: passing both would declare every tool twice, so any Tools
		// the caller passed are cleared.
		return append(opts, llms.WithTools(nil))
	}
	return append(opts, llms.WithTools(ts))
}

// isOpenAI reports whether m is langchaingo's OpenAI client, seeing through
// wrappers (logging, tracing, retries) that expose it with an
// Unwrap() llms.Model method.
func isOpenAI(m llms.Model) bool {
	for range 32 {
		switch v := m.(type) {
		case *openai.LLM:
			return true
		case interface{ Unwrap() llms.Model }:
			m = v.Unwrap()
		default:
			return false
		}
	}
	return false
}

// callIDs assigns tool-call identities: the model's own tool-call ids when
// its response has them (OpenAIFunctionsAgent), otherwise
// "<owner>/step-<n>/call-<i>" from the owner's model-request count and the
// call's index in that step.
type callIDs struct {
	owner   string
	mu      sync.Mutex
	n       int // model requests answered so far
	index   int // tool calls made since the last answer
	pending []pendingCall
}

type pendingCall struct{ name, id string }

func (c *callIDs) step(resp *llms.ContentResponse) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	c.index = 0
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

// next returns the identity of the next call of the tool named name.
func (c *callIDs) next(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.index++
	for i, p := range c.pending {
		if strings.EqualFold(p.name, name) {
			c.pending = c.pending[i+1:]
			return p.id
		}
	}
	return fmt.Sprintf("%s/step-%d/call-%d", c.owner, c.n, c.index)
}
