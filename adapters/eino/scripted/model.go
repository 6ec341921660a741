package scripted

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
)

// ErrExhausted is wrapped by the error of a request made after every
// scripted step has been used.
var ErrExhausted = errors.New("scripted: no steps left")

// Step is one scripted reply. Build it with Text, Call, Calls, Fail or
// Func; the zero Step is invalid (its request fails).
type Step struct {
	text  string
	calls []ToolCall
	err   error
	fn    func(Request) Step
	usage *schema.TokenUsage
	set   bool
}

// ToolCall is one tool call of a Calls step. An empty ID is numbered
// call_<request>_<k>, as providers issue one id per call.
type ToolCall struct{ ID, Name, Arguments string }

// Text replies with text (a final answer).
func Text(s string) Step { return Step{text: s, set: true} }

// Call replies with one tool call of name with the JSON arguments args.
func Call(name, args string) Step { return Calls(ToolCall{Name: name, Arguments: args}) }

// CallID is Call with the provider's tool-call id id.
func CallID(id, name, args string) Step {
	return Calls(ToolCall{ID: id, Name: name, Arguments: args})
}

// Calls replies with several tool calls in one message.
func Calls(calls ...ToolCall) Step {
	return Step{calls: append([]ToolCall(nil), calls...), set: true}
}

// Fail makes the request return err.
func Fail(err error) Step { return Step{err: err, set: true} }

// Func decides the reply from the request itself (it must not return
// another Func step).
func Func(fn func(Request) Step) Step { return Step{fn: fn, set: true} }

// WithUsage returns s reporting token usage in its reply's ResponseMeta.
func (s Step) WithUsage(prompt, completion int) Step {
	s.usage = &schema.TokenUsage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
	return s
}

// Request is one recorded request: its messages (copies) and the tools it
// offered.
type Request struct {
	Index    int
	Messages []*schema.Message
	Tools    []*schema.ToolInfo
}

// Declares reports whether the request offers a tool named name.
func (r Request) Declares(name string) bool {
	for _, t := range r.Tools {
		if t != nil && t.Name == name {
			return true
		}
	}
	return false
}

// LastUser returns the text of the request's last user message.
func (r Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == schema.User {
			return r.Messages[i].Content
		}
	}
	return ""
}

// Text returns every message's content, one a line.
func (r Request) Text() string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	return b.String()
}

// LastToolResult returns the content of the request's last tool message.
func (r Request) LastToolResult() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == schema.Tool {
			return r.Messages[i].Content
		}
	}
	return ""
}

// Model is a scripted chat model. The zero Model has no steps. It is safe
// for concurrent use; calls are numbered in the order they take its lock.
type Model struct {
	mu       sync.Mutex
	steps    []Step
	requests []Request
}

var _ model.ToolCallingChatModel = (*Model)(nil)

// New returns a Model that answers its requests with steps, in order.
func New(steps ...Step) *Model { return &Model{steps: append([]Step(nil), steps...)} }

// Append adds steps to the end of the script, at any time.
func (m *Model) Append(steps ...Step) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.steps = append(m.steps, steps...)
}

// Remaining returns how many scripted steps are not yet used.
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return max(len(m.steps)-len(m.requests), 0)
}

// Requests returns every request recorded so far, in order.
func (m *Model) Requests() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Request(nil), m.requests...)
}

// Generate answers with the next step.
func (m *Model) Generate(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o := model.GetCommonOptions(&model.Options{}, opts...)
	msgs := make([]*schema.Message, len(input))
	for i, in := range input {
		cp := *in
		msgs[i] = &cp
	}
	m.mu.Lock()
	req := Request{Index: len(m.requests), Messages: msgs, Tools: append([]*schema.ToolInfo(nil), o.Tools...)}
	m.requests = append(m.requests, req)
	var step Step
	ok := req.Index < len(m.steps)
	if ok {
		step = m.steps[req.Index]
	}
	total := len(m.steps)
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: request %d arrived after all %d scripted steps were used", ErrExhausted, req.Index, total)
	}
	return reply(req, step)
}

// Stream answers with the next step as a stream of one message.
func (m *Model) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, input, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

// WithTools returns m: a ChatModelAgent passes its tools with each request
// (model.WithTools), which the recorded Request shows.
func (m *Model) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return m, nil }

// ProviderName returns "scripted", the gen_ai.provider.name telemetry
// records for agents on a scripted model.
func (m *Model) ProviderName() string { return "scripted" }

func reply(req Request, step Step) (*schema.Message, error) {
	if step.fn != nil {
		usage := step.usage
		step = step.fn(req)
		if step.fn != nil || !step.set {
			return nil, fmt.Errorf("scripted: request %d: its Func step returned no reply", req.Index)
		}
		if step.usage == nil {
			step.usage = usage
		}
	}
	switch {
	case !step.set:
		return nil, fmt.Errorf("scripted: request %d: its step is the zero Step", req.Index)
	case step.err != nil:
		return nil, step.err
	}
	msg := &schema.Message{Role: schema.Assistant, Content: step.text, ResponseMeta: &schema.ResponseMeta{FinishReason: "stop"}}
	if len(step.calls) > 0 {
		msg.ResponseMeta.FinishReason = "tool_calls"
		for k, c := range step.calls {
			id := c.ID
			if id == "" {
				id = fmt.Sprintf("call_%d_%d", req.Index+1, k+1)
			}
			msg.ToolCalls = append(msg.ToolCalls, schema.ToolCall{ID: id, Type: "function",
				Function: schema.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
		}
	}
	if step.usage != nil {
		u := *step.usage
		msg.ResponseMeta.Usage = &u
	}
	return msg, nil
}
