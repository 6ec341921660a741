package adaptertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// ErrExhausted is wrapped by the error of a request made after every step
// of a Script was used.
var ErrExhausted = errors.New("adaptertest: no scripted steps left")

// Role is a message's role in a Request, in the framework-neutral form a
// model wrapper writes it.
type Role string

// The roles. A wrapper maps its framework's roles onto these (langchaingo's
// human is RoleUser, ai RoleAssistant; Eino's schema roles are these).
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Request is one model request as the provider would see it, written by a
// framework's model wrapper: the messages in order and the tool
// definitions offered.
type Request struct {
	// Index is the request's 0-based position in its Script's lifetime.
	Index    int
	Messages []Message
	Tools    []ToolDef
}

// Message is one message of a Request.
type Message struct {
	Role Role
	// Text is the message's text (its text parts joined with "").
	Text string
	// ToolCalls are an assistant message's tool calls.
	ToolCalls []Call
	// ToolCallID is the call a tool message answers.
	ToolCallID string
	// Cached reports a part marked for prompt caching.
	Cached bool
}

// ToolDef is a tool definition offered to the model.
type ToolDef struct {
	Name        string
	Description string
	// Parameters is the JSON schema of the tool's input, as sent.
	Parameters json.RawMessage
}

// Call is one tool call of a reply.
type Call struct {
	// ID is the provider-issued tool-call id. Empty in a step means
	// "call_<request>_<k>" (1-based request number in the Script's
	// lifetime, 1-based position in the reply).
	ID        string
	Name      string
	Arguments string
}

// Reply is what a wrapper turns into its framework's response: Text when
// Calls is empty (a final answer), else the tool calls; Usage, when not
// nil, is the token usage the response reports (the framework's usage
// field, as a provider fills it).
type Reply struct {
	Text  string
	Calls []Call
	Usage *Usage
}

// Usage is the token usage of a reply (WithUsage).
type Usage struct {
	Input, Output int
}

// Step is one scripted reply. Build it with Text, Calls, Func or Fail.
type Step struct {
	text  string
	calls []Call
	fn    func(Request) Step
	err   error
	usage *Usage
	set   bool
}

// WithUsage returns s reporting input and output tokens in its reply's
// Usage (for a Func step: unless the step it returns reports its own).
func (s Step) WithUsage(input, output int) Step {
	s.usage = &Usage{Input: input, Output: output}
	return s
}

// Text is a final answer.
func Text(s string) Step { return Step{text: s, set: true} }

// Calls replies with tool calls, in order.
func Calls(calls ...Call) Step {
	if len(calls) == 0 {
		return Fail(errors.New("adaptertest: Calls with no call"))
	}
	return Step{calls: append([]Call(nil), calls...), set: true}
}

// CallTool replies with one tool call whose arguments are the JSON of args
// (a string is sent as it is).
func CallTool(id, name string, args any) Step {
	return Calls(Call{ID: id, Name: name, Arguments: argJSON(args)})
}

// Func decides the reply from the request (a copy). It runs on the
// requesting goroutine, outside the Script's lock; it must not return
// another Func step.
func Func(fn func(Request) Step) Step {
	if fn == nil {
		return Fail(errors.New("adaptertest: Func with a nil function"))
	}
	return Step{fn: fn, set: true}
}

// Fail makes the request fail with err, as a provider error would.
func Fail(err error) Step { return Step{err: err, set: true} }

func argJSON(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Script is a framework-neutral scripted model: each request takes the
// next step, in arrival order, and is recorded. A framework's thin model
// wrapper converts its request to a Request, calls Reply and converts the
// Reply back. It is safe for concurrent use; it starts no goroutine.
type Script struct {
	mu       sync.Mutex
	steps    []Step
	requests []Request
	// more, when set, answers the requests after the last step (a
	// puppet's: the test decides each reply as the request arrives).
	more func(Request) Step
}

// NewScript returns a Script answering with steps in order.
func NewScript(steps ...Step) *Script { return &Script{steps: append([]Step(nil), steps...)} }

// Reply answers one request. Every request is recorded, one whose ctx is
// already done too (a request sent after a cancel is what the suite looks
// for), and then returns ctx.Err() (its step is skipped); a request past
// the last step fails with ErrExhausted; a Fail step returns its error,
// the zero Step an error.
func (s *Script) Reply(ctx context.Context, req Request) (Reply, error) {
	s.mu.Lock()
	req.Index = len(s.requests)
	s.requests = append(s.requests, req.clone())
	if err := ctx.Err(); err != nil {
		s.mu.Unlock()
		return Reply{}, err
	}
	var step Step
	ok := req.Index < len(s.steps)
	if ok {
		step = s.steps[req.Index]
	} else if s.more != nil {
		step, ok = Func(s.more), true
	}
	s.mu.Unlock()
	if !ok {
		return Reply{}, fmt.Errorf("%w: request %d", ErrExhausted, req.Index)
	}
	if step.fn != nil {
		usage := step.usage
		step = step.fn(req.clone())
		if step.fn != nil || !step.set {
			return Reply{}, fmt.Errorf("adaptertest: request %d: a Func step returned no reply", req.Index)
		}
		if step.usage == nil {
			step.usage = usage
		}
	}
	if !step.set {
		return Reply{}, fmt.Errorf("adaptertest: request %d: its step is the zero Step", req.Index)
	}
	if step.err != nil {
		return Reply{}, step.err
	}
	r := Reply{Text: step.text}
	if step.usage != nil {
		u := *step.usage
		r.Usage = &u
	}
	for k, c := range step.calls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d_%d", req.Index+1, k+1)
		}
		r.Calls = append(r.Calls, c)
	}
	return r, nil
}

// Append adds steps to the end of the script, at any time.
func (s *Script) Append(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps = append(s.steps, steps...)
}

// Requests returns copies of the requests recorded so far.
func (s *Script) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = r.clone()
	}
	return out
}

// Remaining returns the number of steps not used yet.
func (s *Script) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(len(s.steps)-len(s.requests), 0)
}

func (r Request) clone() Request {
	c := r
	c.Messages = make([]Message, len(r.Messages))
	for i, m := range r.Messages {
		m.ToolCalls = append([]Call(nil), m.ToolCalls...)
		c.Messages[i] = m
	}
	c.Tools = make([]ToolDef, len(r.Tools))
	for i, d := range r.Tools {
		d.Parameters = append(json.RawMessage(nil), d.Parameters...)
		c.Tools[i] = d
	}
	return c
}

// Result returns the text of the last tool message answering call id
// (a provider may repeat an id: the last answers the latest call), and
// whether there is one.
func (r Request) Result(id string) (string, bool) {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if m := r.Messages[i]; m.Role == RoleTool && m.ToolCallID == id {
			return m.Text, true
		}
	}
	return "", false
}

// ToolNames returns the names of the tools offered, in order.
func (r Request) ToolNames() []string {
	out := make([]string, len(r.Tools))
	for i, d := range r.Tools {
		out[i] = d.Name
	}
	return out
}

// Text returns every message's text and tool calls' arguments, joined.
func (r Request) Text() string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Text)
		b.WriteByte('\n')
		for _, c := range m.ToolCalls {
			b.WriteString(c.Name + " " + c.Arguments + "\n")
		}
	}
	return b.String()
}

// Declares reports whether the request offers a tool named name.
func (r Request) Declares(name string) bool {
	for _, d := range r.Tools {
		if d.Name == name {
			return true
		}
	}
	return false
}

// FirstUser returns the text of the request's first user message (an
// agent's input), or "".
func (r Request) FirstUser() string {
	for _, m := range r.Messages {
		if m.Role == RoleUser {
			return m.Text
		}
	}
	return ""
}

// LastUser returns the text of the request's last user message, or "".
func (r Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == RoleUser {
			return r.Messages[i].Text
		}
	}
	return ""
}

// LastToolResult returns the text of the request's last tool message, or
// "".
func (r Request) LastToolResult() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == RoleTool {
			return r.Messages[i].Text
		}
	}
	return ""
}

// Last returns the request's last message (the zero Message when it has
// none).
func (r Request) Last() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}
