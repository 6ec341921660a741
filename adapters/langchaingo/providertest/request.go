package providertest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Request is one request a server received: the raw body and a
// provider-neutral parse of it. Recorded requests are never changed after
// the reply is chosen; Requests returns them in arrival order.
type Request struct {
	// N is the request's 1-based arrival number on its server.
	N int
	// API is "openai" (chat completions, also Ollama's /v1) or "anthropic"
	// or "ollama" (Ollama's native /api/chat).
	API string
	// Path is the URL path, for example "/v1/chat/completions".
	Path string
	// Header holds the request's headers (API keys included: the fake
	// server is local and the tests' keys are fake).
	Header map[string][]string
	// Body is the request body exactly as received.
	Body []byte

	Model string
	// System is the system prompt: Anthropic's "system" field, or the
	// system messages' text (which then also appear in Messages).
	System   string
	Messages []Message
	// Tools are the declared tools in request order.
	Tools []Tool
	// Stop holds the stop sequences.
	Stop []string
	// Stream reports whether the request asked for a streamed reply.
	Stream bool

	ctx  context.Context
	fail func(format string, args ...any)
}

// Message is one message of a request. Role is "system", "user",
// "assistant" or "tool" (OpenAI's tool role and Ollama's). Anthropic's
// tool_result blocks come in user messages, as on the wire.
type Message struct {
	Role string
	// Text is the message's text parts, joined with "\n".
	Text string
	// ToolCalls are an assistant message's tool calls (OpenAI tool_calls,
	// Anthropic tool_use blocks).
	ToolCalls []ToolCall
	// ToolResults are tool results: one for an OpenAI tool message, one
	// per tool_result block for Anthropic.
	ToolResults []ToolResult
}

// ToolResult is the result of one tool call sent back to the model.
type ToolResult struct {
	CallID  string
	Content string
}

// Tool is one declared tool. Parameters is its JSON schema (OpenAI's
// "parameters", Anthropic's "input_schema").
type Tool struct {
	Name        string
	Description string
	Parameters  map[string]any
}

// Context returns the request's context: it ends when the client gives up
// or the server stops. A ScriptFunc that waits should also wait on it.
func (r *Request) Context() context.Context {
	if r.ctx == nil {
		return context.Background()
	}
	return r.ctx
}

// Tool returns the declared tool named name.
func (r *Request) Tool(name string) (Tool, bool) {
	for _, t := range r.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// ToolNames returns the declared tools' names in request order.
func (r *Request) ToolNames() []string {
	out := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		out[i] = t.Name
	}
	return out
}

// FirstUserText returns the first user message's text.
func (r *Request) FirstUserText() string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.Text
		}
	}
	return ""
}

// Last returns the last message (zero if there is none).
func (r *Request) Last() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// Text returns every message's text and tool results, joined with "\n".
func (r *Request) Text() string {
	var parts []string
	for _, m := range r.Messages {
		if m.Text != "" {
			parts = append(parts, m.Text)
		}
		for _, tr := range m.ToolResults {
			parts = append(parts, tr.Content)
		}
	}
	return strings.Join(parts, "\n")
}

// ToolResult returns the content sent back for the call with id callID.
func (r *Request) ToolResult(callID string) (string, bool) {
	for _, m := range r.Messages {
		for _, tr := range m.ToolResults {
			if tr.CallID == callID {
				return tr.Content, true
			}
		}
	}
	return "", false
}

// ToolCalls returns every tool call in the request's assistant messages,
// in order.
func (r *Request) ToolCalls() []ToolCall {
	var out []ToolCall
	for _, m := range r.Messages {
		out = append(out, m.ToolCalls...)
	}
	return out
}

// JSON decodes the raw body into a generic value, for assertions on fields
// the parse does not carry.
func (r *Request) JSON() map[string]any {
	var v map[string]any
	_ = json.Unmarshal(r.Body, &v)
	return v
}

func (r *Request) clone() *Request {
	cp := *r
	cp.Body = append([]byte(nil), r.Body...)
	cp.Messages = append([]Message(nil), r.Messages...)
	cp.Tools = append([]Tool(nil), r.Tools...)
	cp.fail = nil
	return &cp
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// textOf returns the text of an OpenAI or Ollama content value: a string,
// or an array of parts whose text parts are joined with "\n".
func textOf(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content is neither a string nor an array of parts: %s", clip(string(raw), 80))
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}
