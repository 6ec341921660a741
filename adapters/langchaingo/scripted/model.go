package scripted

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tmc/langchaingo/llms"
)

// ErrExhausted is wrapped by the error of a request made after every scripted
// step has been used.
var ErrExhausted = errors.New("scripted: no steps left")

// Model is a scripted [llms.Model]. Create one with [New]; the zero Model is
// a valid model with no steps.
//
// Each GenerateContent call takes the next step in order, records the
// request, and replies as the step says. Calls are numbered in the order they
// take the model's lock, so with concurrent callers the pairing of callers
// to steps follows arrival order. A Model is safe for concurrent use by
// multiple goroutines. It starts no goroutines and holds no resources.
type Model struct {
	mu       sync.Mutex
	steps    []Step
	requests []Request
}

var _ llms.Model = (*Model)(nil)

// New returns a Model that answers its requests with steps, in order.
func New(steps ...Step) *Model {
	return &Model{steps: append([]Step(nil), steps...)}
}

// Append adds steps to the end of the script. It may be called at any time,
// concurrently with requests.
func (m *Model) Append(steps ...Step) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.steps = append(m.steps, steps...)
}

// Remaining returns the number of scripted steps not yet used: zero once a
// test's script has been played out completely.
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return max(len(m.steps)-len(m.requests), 0)
}

// Requests returns deep copies of every request recorded so far, in order
// (Requests()[i].Index == i). It includes requests that failed because the
// script was exhausted or their step failed, but not calls whose context was
// already done or whose tool definitions could not be encoded.
func (m *Model) Requests() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Request, len(m.requests))
	for i, r := range m.requests {
		out[i] = r.clone()
	}
	return out
}

// GenerateContent implements [llms.Model]. It answers with the next step:
//
//   - a text step: one choice with the text as Content and StopReason
//     "stop", after calling the options' streaming function (if set) once
//     with the text (if not empty); that function's error is returned;
//   - a tool-call step: one choice with the calls as ToolCalls (and the
//     first again as FuncCall), empty Content, StopReason "tool_calls";
//   - a [Func] step: fn is called with a copy of the request and its result
//     is answered as above;
//   - a [Fail] step: the step's error;
//   - no step left: an error wrapping [ErrExhausted];
//   - an invalid step (the zero Step, a text helper that would not round-trip,
//     a Func returning a Func or the zero Step): an error naming the step and
//     the reason.
//
// If ctx is already done it returns ctx.Err() without using a step or
// recording the request. The reply shares no memory with the script.
func (m *Model) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var opts llms.CallOptions
	for _, o := range options {
		o(&opts)
	}

	m.mu.Lock()
	index := len(m.requests)
	req, err := record(index, messages, opts)
	if err != nil {
		m.mu.Unlock()
		return nil, fmt.Errorf("scripted: request %d: %w", index, err)
	}
	m.requests = append(m.requests, req)
	var (
		step Step
		ok   = index < len(m.steps)
	)
	if ok {
		step = m.steps[index]
	}
	total := len(m.steps)
	m.mu.Unlock()

	if !ok {
		return nil, fmt.Errorf("%w: request %d arrived after all %d scripted steps were used", ErrExhausted, index, total)
	}
	if step.kind == kindFunc && step.err == nil {
		step = step.fn(req.clone())
		if step.kind == kindFunc || step.kind == kindZero {
			return nil, fmt.Errorf("scripted: request %d: its Func step returned %s, not a reply", index, describeStep(step))
		}
	}
	return reply(ctx, index, step, opts)
}

// Call implements [llms.Model]'s legacy Call: the prompt as one human text
// message through GenerateContent (llms.GenerateFromSinglePrompt). A tool-call
// step answers it with the empty string.
func (m *Model) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

func describeStep(s Step) string {
	switch s.kind {
	case kindZero:
		return "the zero Step"
	case kindFunc:
		return "another Func step"
	default:
		return s.label
	}
}

func reply(ctx context.Context, index int, step Step, opts llms.CallOptions) (*llms.ContentResponse, error) {
	switch {
	case step.kind == kindFail:
		return nil, step.err
	case step.kind == kindZero:
		return nil, fmt.Errorf("scripted: request %d: its step is the zero Step", index)
	case step.err != nil:
		return nil, fmt.Errorf("scripted: request %d: step %s: %w", index, step.label, step.err)
	}

	choice := &llms.ContentChoice{}
	switch step.kind {
	case kindText:
		if opts.StreamingFunc != nil && step.text != "" {
			if err := opts.StreamingFunc(ctx, []byte(step.text)); err != nil {
				return nil, err
			}
		}
		choice.Content = step.text
		choice.StopReason = "stop"
	case kindToolCalls:
		choice.StopReason = "tool_calls"
		choice.ToolCalls = make([]llms.ToolCall, len(step.calls))
		for k, c := range step.calls {
			id := c.ID
			if id == "" {
				id = fmt.Sprintf("call_%d_%d", index+1, k+1)
			}
			choice.ToolCalls[k] = llms.ToolCall{
				ID:           id,
				Type:         "function",
				FunctionCall: &llms.FunctionCall{Name: c.Name, Arguments: c.Arguments},
			}
		}
		first := *choice.ToolCalls[0].FunctionCall
		choice.FuncCall = &first
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{choice}}, nil
}

// ProviderName returns "scripted": the provider name telemetry records for
// agents on a scripted model (gen_ai.provider.name).
func (m *Model) ProviderName() string { return "scripted" }
