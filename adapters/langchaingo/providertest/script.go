package providertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
)

// Reply is one scripted answer: text, tool calls, or both (text first, as a
// model writes "I'll look into that." before calling a tool). A Reply with
// Status set answers with that HTTP status and the provider's error body,
// Text being the error message. A Reply is a Script that always gives
// itself.
type Reply struct {
	Text      string
	ToolCalls []ToolCall
	Status    int
}

// ToolCall is one tool call in a Reply, or in a recorded request's
// assistant message. Arguments is a JSON object. ID is the provider's call
// id; left empty in a Reply, the server makes one in the provider's shape
// (call_..., toolu_...). Ollama's native API has no call ids.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Next returns r.
func (r Reply) Next(*Request) Reply { return r }

// Say returns a Reply with text only: a final answer for a function-calling
// agent, or a whole ReAct turn for a text agent.
func Say(text string) Reply { return Reply{Text: text} }

// Call returns a tool call of name with arguments (a JSON object).
func Call(name, arguments string) ToolCall { return ToolCall{Name: name, Arguments: arguments} }

// Calls returns a Reply with the given tool calls (parallel tool calls when
// there are several).
func Calls(calls ...ToolCall) Reply { return Reply{ToolCalls: calls} }

// SayThenCall returns a Reply with text followed by tool calls.
func SayThenCall(text string, calls ...ToolCall) Reply { return Reply{Text: text, ToolCalls: calls} }

// Fail returns a Reply that answers with an HTTP error status and message.
func Fail(status int, message string) Reply { return Reply{Status: status, Text: message} }

// Args encodes v as a JSON object for a ToolCall's Arguments. It panics if
// v cannot be encoded (a test's own mistake).
func Args(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("providertest.Args: %v", err))
	}
	return string(b)
}

// ReActCall returns the text a OneShot (MRKL) agent reads as a call of tool
// with input.
func ReActCall(tool, input string) Reply {
	return Say("Action: " + tool + "\nAction Input: " + input)
}

// ReActFinal returns the text a OneShot (MRKL) agent reads as its final
// answer.
func ReActFinal(answer string) Reply { return Say("Final Answer: " + answer) }

// Script decides the Reply to each request. Next may be called from several
// goroutines at once (the server handles requests concurrently).
type Script interface {
	Next(req *Request) Reply
}

// ScriptFunc is a Script from a function.
type ScriptFunc func(req *Request) Reply

// Next calls f.
func (f ScriptFunc) Next(req *Request) Reply { return f(req) }

// Sequence returns a Script that answers the n-th request it gets with
// scripts[n] (each script is asked once). A request after the last one
// fails the test.
func Sequence(scripts ...Script) *Seq {
	return &Seq{scripts: scripts}
}

// Seq is a Script answering with its scripts in order; see Sequence.
type Seq struct {
	mu      sync.Mutex
	scripts []Script
	next    int
}

// Next answers req with the next script, or an exhausted error.
func (s *Seq) Next(req *Request) Reply {
	s.mu.Lock()
	i := s.next
	if i < len(s.scripts) {
		s.next++
	}
	s.mu.Unlock()
	if i >= len(s.scripts) {
		req.fail("providertest: script used up: request %d asked for reply %d of %d", req.N, i+1, len(s.scripts))
		return Fail(http.StatusInternalServerError, "providertest: script used up")
	}
	return s.scripts[i].Next(req)
}

// Remaining returns how many scripts have not been asked yet.
func (s *Seq) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.scripts) - s.next
}

// Routed is one route of a Route script.
type Routed struct {
	Match  func(*Request) bool
	Script Script
}

// When returns a route: requests accepted by match go to script.
func When(match func(*Request) bool, script Script) Routed {
	return Routed{Match: match, Script: script}
}

// Route returns a Script that sends each request to the first route whose
// Match accepts it. A request no route accepts fails the test.
func Route(routes ...Routed) Script {
	return ScriptFunc(func(req *Request) Reply {
		for _, r := range routes {
			if r.Match(req) {
				return r.Script.Next(req)
			}
		}
		req.fail("providertest: no route matches request %d (first user text %q)", req.N, clip(req.FirstUserText(), 120))
		return Fail(http.StatusInternalServerError, "providertest: no route matches")
	})
}

// Declares matches requests that declare a tool named name.
func Declares(name string) func(*Request) bool {
	return func(r *Request) bool { _, ok := r.Tool(name); return ok }
}

// FirstUserContains matches requests whose first user message contains s
// (the agent's input, or a text agent's whole rendered prompt).
func FirstUserContains(s string) func(*Request) bool {
	return func(r *Request) bool { return contains(r.FirstUserText(), s) }
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
