package scripted

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"
)

type stepKind int

const (
	kindZero stepKind = iota
	kindText
	kindToolCalls
	kindFunc
	kindFail
)

// Step is one scripted reply: the answer to one GenerateContent call. Build
// Steps with [Text], [ToolCall], [ToolCalls], [Func], [Fail] or the agent
// helpers ([FunctionsCall], [ReActCall], [ReActFinal], [ConversationalCall],
// [ConversationalFinal]).
//
// A Step is an immutable value and may be reused, in one script or several.
// The zero Step is not a valid reply: a request answered by it fails.
type Step struct {
	kind  stepKind
	label string // for error messages, e.g. `ReActFinal("x")`
	text  string
	calls []Call
	fn    func(Request) Step
	err   error
}

// Call is one tool call in a [ToolCalls] reply.
type Call struct {
	// ID is the tool-call id the model reports. Empty means the deterministic
	// id "call_<request>_<k>": the 1-based number of the request in the
	// model's lifetime (Request.Index+1) and the 1-based position of the call
	// in the reply.
	ID string
	// Name is the tool (function) name.
	Name string
	// Arguments is the arguments string, normally a JSON object. It is passed
	// through as is, so invalid JSON can be scripted too.
	Arguments string
}

// Text returns a Step that replies with text: the choice's Content is text
// and its StopReason is "stop". The request's streaming function, if any, is
// called once with text (when text is not empty).
//
// For an OpenAIFunctionsAgent, a text reply is the final answer, returned
// verbatim as the executor's "output".
func Text(text string) Step {
	return Step{kind: kindText, label: fmt.Sprintf("Text(%q)", text), text: text}
}

// ToolCall returns a Step that replies with one native tool call to name
// with the given arguments (normally JSON), with the deterministic id
// described on [Call]. It is ToolCalls(Call{Name: name, Arguments: arguments}).
func ToolCall(name, arguments string) Step {
	return ToolCalls(Call{Name: name, Arguments: arguments})
}

// ToolCalls returns a Step that replies with the given native tool calls, in
// order, in one choice: Content is empty, StopReason is "tool_calls",
// ToolCalls holds one llms.ToolCall of Type "function" per call, and FuncCall
// repeats the first call (as langchaingo's OpenAI client does). A Step with
// no calls fails its request.
func ToolCalls(calls ...Call) Step {
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Name
	}
	s := Step{
		kind:  kindToolCalls,
		label: fmt.Sprintf("ToolCalls(%s)", strings.Join(names, ", ")),
		calls: append([]Call(nil), calls...),
	}
	if len(calls) == 0 {
		s.err = errors.New("ToolCalls has no calls")
	}
	return s
}

// Func returns a Step decided by fn from the request being answered, so a
// test can react to what the model saw (a status block, delivered guidance,
// a tool result). fn receives a deep copy of the request (its own copy: it
// may keep or modify it) and returns the Step to reply with, which must not
// be another Func step or the zero Step.
//
// fn runs on the caller's goroutine, outside the model's lock: it may call
// the model's methods (Requests, Append, Remaining), and with concurrent
// callers it may run concurrently with itself. A panic in fn propagates to
// the GenerateContent caller.
func Func(fn func(req Request) Step) Step {
	s := Step{kind: kindFunc, label: "Func", fn: fn}
	if fn == nil {
		s.err = errors.New("Func with a nil function")
	}
	return s
}

// Fail returns a Step whose request returns err (as a provider error would).
// A nil err fails the request with a generic error.
func Fail(err error) Step {
	if err == nil {
		err = errors.New("scripted failure")
	}
	return Step{kind: kindFail, label: "Fail", err: err}
}

// FunctionsCall returns a Step that makes an OpenAIFunctionsAgent call tool
// with input: a native tool call with the arguments {"__arg1": input}, the
// single string parameter the agent declares for every tool; the agent
// unwraps it and the executor passes input to the tool verbatim.
func FunctionsCall(tool, input string) Step {
	args, _ := json.Marshal(map[string]string{"__arg1": input}) // cannot fail
	s := ToolCall(tool, string(args))
	s.label = fmt.Sprintf("FunctionsCall(%q, %q)", tool, input)
	return s
}

// ReActCall returns a Step that makes a OneShotZeroAgent (MRKL) call tool
// with input. The reply is the text
//
//	Action: <tool>
//	Action Input: <input>
//
// If langchaingo's MRKL parser would not read that text back as exactly this
// call (tool or input with surrounding space, a tool name with a newline, an
// input containing a final-answer phrase such as "the answer is:", an input
// ending in "\nObservation:"), the request answered by the Step fails with
// an error saying so.
func ReActCall(tool, input string) Step {
	text := "Action: " + tool + "\nAction Input: " + input
	return textStep(fmt.Sprintf("ReActCall(%q, %q)", tool, input), text,
		mrklParser.checkCall(text, tool, input))
}

// ReActFinal returns a Step that makes a OneShotZeroAgent (MRKL) finish with
// answer as its output. The reply is the text
//
//	Final Answer: <answer>
//
// The agent trims the answer and splits on the last "Final Answer:", so an
// answer with surrounding space or containing "Final Answer:" fails its
// request with an error saying so.
func ReActFinal(answer string) Step {
	text := "Final Answer: " + answer
	return textStep(fmt.Sprintf("ReActFinal(%q)", answer), text,
		mrklParser.checkFinal(text, answer))
}

// ConversationalCall returns a Step that makes a ConversationalAgent call
// tool with input. The prompt ends in "Thought:", and the reply continues it:
//
//	Do I need to use a tool? Yes
//	Action: <tool>
//	Action Input: <input>
//
// If langchaingo's conversational parser would not read that text back as
// exactly this call (notably an input containing "AI:", which the agent
// takes as a final answer), the request answered by the Step fails with an
// error saying so.
func ConversationalCall(tool, input string) Step {
	text := "Do I need to use a tool? Yes\nAction: " + tool + "\nAction Input: " + input
	return textStep(fmt.Sprintf("ConversationalCall(%q, %q)", tool, input), text,
		conversationalParser.checkCall(text, tool, input))
}

// ConversationalFinal returns a Step that makes a ConversationalAgent finish
// with exactly answer as its output. The reply is the text
//
//	Do I need to use a tool? No
//	AI:<answer>
//
// with no space after "AI:", because the agent returns everything after the
// last "AI:" untrimmed (a real model's "AI: hello" yields the output
// " hello"). The agent's chain trims the reply as a whole, so an answer that
// ends in white space or contains "AI:" fails its request with an error
// saying so.
func ConversationalFinal(answer string) Step {
	text := "Do I need to use a tool? No\nAI:" + answer
	return textStep(fmt.Sprintf("ConversationalFinal(%q)", answer), text,
		conversationalParser.checkFinal(text, answer))
}

func textStep(label, text string, err error) Step {
	return Step{kind: kindText, label: label, text: text, err: err}
}

// The text helpers are checked by a round trip through the agents' own
// parsers: an agent built on a model that always replies with the text is
// asked to Plan once, and what it plans must be what the helper promises.

type constModel string

func (c constModel) GenerateContent(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: string(c)}}}, nil
}

func (c constModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, c, prompt, opts...)
}

type parser struct {
	name     string
	newAgent func(llms.Model) agents.Agent
}

var (
	mrklParser = parser{"OneShotZeroAgent", func(m llms.Model) agents.Agent {
		return agents.NewOneShotAgent(m, nil)
	}}
	conversationalParser = parser{"ConversationalAgent", func(m llms.Model) agents.Agent {
		return agents.NewConversationalAgent(m, nil)
	}}
)

func (p parser) plan(text string) ([]schema.AgentAction, *schema.AgentFinish, error) {
	return p.newAgent(constModel(text)).Plan(context.Background(), nil, map[string]string{"input": ""})
}

// checkCall reports whether the agent reads text as exactly one call to tool
// whose input, as the executor passes it to the tool, is input.
func (p parser) checkCall(text, tool, input string) error {
	actions, finish, err := p.plan(text)
	if err == nil && finish == nil && len(actions) == 1 && actions[0].Tool == tool &&
		strings.TrimSuffix(actions[0].ToolInput, "\nObservation:") == input {
		return nil
	}
	return fmt.Errorf("langchaingo's %s would not read the reply %q as a call to %q with input %q: it reads %s",
		p.name, text, tool, input, describe(actions, finish, err))
}

// checkFinal reports whether the agent reads text as a finish whose output is
// exactly answer.
func (p parser) checkFinal(text, answer string) error {
	actions, finish, err := p.plan(text)
	if err == nil && len(actions) == 0 && finish != nil && finish.ReturnValues["output"] == answer {
		return nil
	}
	return fmt.Errorf("langchaingo's %s would not read the reply %q as the final answer %q: it reads %s",
		p.name, text, answer, describe(actions, finish, err))
}

func describe(actions []schema.AgentAction, finish *schema.AgentFinish, err error) string {
	switch {
	case err != nil:
		return "a parse error"
	case finish != nil:
		return fmt.Sprintf("the final answer %q", finish.ReturnValues["output"])
	case len(actions) == 1:
		return fmt.Sprintf("a call to %q with input %q", actions[0].Tool, actions[0].ToolInput)
	default:
		return fmt.Sprintf("%d calls", len(actions))
	}
}
