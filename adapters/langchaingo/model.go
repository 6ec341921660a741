package langchaingo

import (
	"context"
	"sync/atomic"

	"github.com/tmc/langchaingo/llms"

	"github.com/agentwork/agentwork/middleware"
)

// Model wraps an llms.Model for one agent instance. On every GenerateContent
// it, in order:
//
//  1. if ctx is a child's (a background or foreground child run), returns
//     the context's error when the child's Work was cancelled or its
//     deadline passed (cooperative cancel at the boundary), else appends the
//     child's queued guidance, framed, as a final user message (after
//     waiting there, when the child asked a question with emit_update,
//     for the answer: the engine's BeginRequest waits; a question that
//     went unanswered in time adds middleware.NoAnswerNote before it);
//  2. if the Model belongs to a Kit that RunUntilSettled is resuming
//     with child updates (ReportUpdates), inserts their block
//     (middleware.UpdatesBlock) as a user message of its own right after
//     the resume's notice, in every request of that resumed run;
//  3. if the Model belongs to a Kit (a coordinator), appends the owner's
//     status block as a final user message when the owner has visible Work;
//  4. when the request carries function definitions (a function-calling
//     agent: OpenAIFunctionsAgent passes Functions only), passes them as
//     Tools as well as Functions, so that clients that read only Tools
//     (anthropic, googleai) declare them; langchaingo's OpenAI client, which
//     turns both into tools and would declare each twice, gets Functions
//     only. A coordinator's Model first replaces the fixed __arg1 schema of
//     the work tool and of prepared children with their real JSON schemas,
//     and a child's Model (in a run of a child that declares updates) that
//     of emit_update.
//     A client that sends no tools at all (langchaingo v0.1.14's
//     llms/ollama) fails the request with ErrToolsNotSent instead of
//     running the agent without tools;
//  5. replays every earlier tool call with JSON-object arguments:
//     OpenAIFunctionsAgent replays an ordinary tool's call with the
//     unwrapped __arg1 string as its arguments, which the anthropic client
//     cannot send (it decodes them as JSON and fails the request); such
//     arguments are sent as {"__arg1": <string>}, what the model wrote;
//  6. merges a reply split into several choices (anthropic gives each
//     content block its own choice: text, then one per tool_use) into one
//     choice holding every tool call, the texts joined with "\n", so that
//     no call is lost and text before a call does not end the run. A
//     request that asks for several alternatives (llms.WithN > 1) is left
//     as it is.
//
// Wrappers around a client (logging, tracing, retries) must expose it with
// an Unwrap() llms.Model method to be recognised in step 4.
//
// It never mutates the caller's slice and never adds a system message or a
// cache mark. It is safe for concurrent use. The zero (and a nil) Model
// wraps nothing: its GenerateContent and Call return ErrZeroModel. A nil
// context gets ErrNilContext.
type Model struct {
	inner llms.Model
	kit   *Kit // nil for a child's model
	// The tool options of the last request's function definitions: an
	// agent sends the same definitions on every request.
	tools atomic.Pointer[toolCache]
}

var _ llms.Model = (*Model)(nil)

// WrapModel wraps a child's model so that it delivers guidance, stops at
// the boundary when its Work is cancelled, passes function definitions as
// Tools as well and merges split replies (steps 1, 4, 5 and 6 of Model).
// FromExecutor and NewAgent do this for langchaingo's three agents; use
// WrapModel for others.
func WrapModel(m llms.Model) *Model {
	if w, ok := m.(*Model); ok {
		return w
	}
	return &Model{inner: m}
}

// Unwrap returns the wrapped model.
func (m *Model) Unwrap() llms.Model {
	if m == nil {
		return nil
	}
	return m.inner
}

// Call implements llms.Model's single-prompt call through GenerateContent.
func (m *Model) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	if m == nil || m.inner == nil {
		return "", ErrZeroModel
	}
	if ctx == nil {
		return "", ErrNilContext
	}
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// GenerateContent implements llms.Model as the type comment describes.
func (m *Model) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	if m == nil || m.inner == nil {
		return nil, ErrZeroModel
	}
	if ctx == nil {
		return nil, ErrNilContext
	}
	var co llms.CallOptions
	for _, o := range opts {
		o(&co)
	}
	tools := len(co.Functions) > 0 || len(co.Tools) > 0
	if tools && !sendsTools(m.inner) {
		return nil, errToolsNotSent(m.inner)
	}
	// The child's boundary (middleware.BeginRequest): cooperative cancel,
	// the budget, progress, and the notes it carries (an unanswered
	// question, guidance).
	b, notes, err := middleware.BeginRequest(ctx)
	if err != nil {
		return nil, err
	}
	if tools {
		dropped := false
		if b.Final() {
			opts, dropped = finalOptions(m.inner, opts, msgs)
		}
		if !dropped {
			_, updates := ctx.Value(runIDsKey{}).(*callIDs) // a run of a child that declares updates
			opts = m.toolOptions(opts, co, updates)
		}
	}
	var extra []llms.MessageContent
	for _, note := range notes {
		extra = append(extra, llms.TextParts(llms.ChatMessageTypeHuman, note))
	}
	if b.Final() {
		extra = append(extra, llms.TextParts(llms.ChatMessageTypeHuman, b.FinalInstruction()))
	}
	if m.kit != nil {
		if block := m.kit.set.StatusBlock(ctx); block != "" {
			extra = append(extra, llms.TextParts(llms.ChatMessageTypeHuman, block))
		}
	}
	if m.kit != nil {
		msgs = m.kit.withUpdatesBlock(msgs)
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
		resp = end(ctx, b, resp)
	}
	if m.kit != nil {
		m.kit.ids.step(resp)
	}
	if ids, ok := ctx.Value(runIDsKey{}).(*callIDs); ok {
		ids.step(resp) // a child's run: its emit_update calls' ids
	}
	return resp, err
}
