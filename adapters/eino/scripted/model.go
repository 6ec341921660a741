package scripted

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/agentwork/agentwork/middleware/adaptertest"
)

// ErrExhausted is wrapped by the error of a request made after every
// scripted step has been used.
var ErrExhausted = adaptertest.ErrExhausted

// Step is one scripted reply (adaptertest.Step). Build it with Text,
// Call, CallID, Calls, Fail or Func; WithUsage adds token usage to it.
// The zero Step is invalid (its request fails).
type Step = adaptertest.Step

// Request is one recorded request (adaptertest.Request): its messages
// and the tools it offered.
type Request = adaptertest.Request

// ToolCall is one tool call of a Calls step. An empty ID is numbered
// call_<request>_<k>, as providers issue one id per call.
type ToolCall = adaptertest.Call

// Text replies with text (a final answer).
func Text(s string) Step { return adaptertest.Text(s) }

// Call replies with one tool call of name with the JSON arguments args.
func Call(name, args string) Step { return Calls(ToolCall{Name: name, Arguments: args}) }

// CallID is Call with the provider's tool-call id id.
func CallID(id, name, args string) Step { return Calls(ToolCall{ID: id, Name: name, Arguments: args}) }

// Calls replies with several tool calls in one message.
func Calls(calls ...ToolCall) Step { return adaptertest.Calls(calls...) }

// Fail makes the request return err.
func Fail(err error) Step { return adaptertest.Fail(err) }

// Func decides the reply from the request itself (it must not return
// another Func step).
func Func(fn func(Request) Step) Step { return adaptertest.Func(fn) }

// Model is the Eino chat model over one script. The zero Model has no
// script: its requests fail. It is safe for concurrent use.
type Model struct {
	s     *adaptertest.Script
	tools []*schema.ToolInfo // bound by WithTools
	cache *paramsCache       // shared with the Models WithTools makes
}

// paramsCache keeps the JSON schema of each tool a Model was offered, by
// its *schema.ToolInfo (an agent offers the same ToolInfos on every
// request; a ToolInfo is not changed once offered), so that a request
// does not encode every tool's schema again. It holds at most
// maxCachedTools entries; beyond them a schema is encoded each time.
type paramsCache struct{ m sync.Map }

const maxCachedTools = 256

func (c *paramsCache) params(ti *schema.ToolInfo) (json.RawMessage, error) {
	if c != nil {
		if p, ok := c.m.Load(ti); ok {
			return p.(json.RawMessage), nil
		}
	}
	params := json.RawMessage("{}")
	if ti.ParamsOneOf != nil {
		js, err := ti.ParamsOneOf.ToJSONSchema()
		if err != nil {
			return nil, err
		}
		if params, err = json.Marshal(js); err != nil {
			return nil, err
		}
	}
	if c != nil {
		n := 0
		c.m.Range(func(any, any) bool { n++; return n < maxCachedTools })
		if n < maxCachedTools {
			c.m.Store(ti, params)
		}
	}
	return params, nil
}

var _ model.ToolCallingChatModel = (*Model)(nil)

// New returns a Model that answers its requests with steps, in order.
func New(steps ...Step) *Model { return Wrap(adaptertest.NewScript(steps...)) }

// Wrap returns the Model over s (the conformance suite's scripts).
func Wrap(s *adaptertest.Script) *Model { return &Model{s: s, cache: &paramsCache{}} }

// Script returns the Model's script.
func (m *Model) Script() *adaptertest.Script { return m.s }

// Append adds steps to the end of the script, at any time.
func (m *Model) Append(steps ...Step) { m.s.Append(steps...) }

// Remaining returns how many scripted steps are not yet used.
func (m *Model) Remaining() int { return m.s.Remaining() }

// Requests returns every request recorded so far, in order.
func (m *Model) Requests() []Request { return m.s.Requests() }

// Generate answers with the next step.
func (m *Model) Generate(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	if m == nil || m.s == nil {
		return nil, ErrExhausted
	}
	req, err := newRequest(input, m.tools, opts, m.cache)
	if err != nil {
		return nil, err
	}
	r, err := m.s.Reply(ctx, req)
	if err != nil {
		return nil, err
	}
	return Message(r), nil
}

// Stream answers with the next step as a stream of one message.
func (m *Model) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, input, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

// WithTools returns a Model on the same script that offers tools with
// each request that passes none of its own (a ChatModelAgent passes them
// with each request, model.WithTools, which the recorded Request shows).
func (m *Model) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return &Model{s: m.s, tools: tools, cache: m.cache}, nil
}

// ProviderName returns "scripted", the gen_ai.provider.name telemetry
// records for agents on a scripted model.
func (m *Model) ProviderName() string { return "scripted" }

// NewRequest converts an Eino request (its messages, and the tools its
// options offer, else bound) to the neutral Request.
func NewRequest(input []*schema.Message, bound []*schema.ToolInfo, opts []model.Option) (Request, error) {
	return newRequest(input, bound, opts, nil)
}

func newRequest(input []*schema.Message, bound []*schema.ToolInfo, opts []model.Option, cache *paramsCache) (Request, error) {
	o := model.GetCommonOptions(&model.Options{Tools: bound}, opts...)
	req := Request{Messages: make([]adaptertest.Message, 0, len(input))}
	for _, m := range input {
		if m == nil {
			continue
		}
		nm := adaptertest.Message{Role: adaptertest.Role(m.Role), Text: m.Content, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			nm.ToolCalls = append(nm.ToolCalls, adaptertest.Call{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		req.Messages = append(req.Messages, nm)
	}
	for _, ti := range o.Tools {
		if ti == nil {
			continue
		}
		params, err := cache.params(ti)
		if err != nil {
			return Request{}, err
		}
		req.Tools = append(req.Tools, adaptertest.ToolDef{Name: ti.Name, Description: ti.Desc, Parameters: params})
	}
	return req, nil
}

// Message converts a neutral Reply to the Eino response: an assistant
// message with the text or the tool calls, and the usage in its
// ResponseMeta.
func Message(r adaptertest.Reply) *schema.Message {
	msg := &schema.Message{Role: schema.Assistant, Content: r.Text, ResponseMeta: &schema.ResponseMeta{FinishReason: "stop"}}
	if len(r.Calls) > 0 {
		msg.ResponseMeta.FinishReason = "tool_calls"
		for _, c := range r.Calls {
			msg.ToolCalls = append(msg.ToolCalls, schema.ToolCall{ID: c.ID, Type: "function",
				Function: schema.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
		}
	}
	if r.Usage != nil {
		msg.ResponseMeta.Usage = &schema.TokenUsage{PromptTokens: r.Usage.Input, CompletionTokens: r.Usage.Output,
			TotalTokens: r.Usage.Input + r.Usage.Output}
	}
	return msg
}
