// Package scripted provides a scripted, goroutine-safe [llms.Model] for tests
// of langchaingo (v0.1.14) agents: it answers each request with the next
// scripted [Step] and records every request it saw.
//
//	m := scripted.New(
//		scripted.FunctionsCall("search", "golang"), // OpenAIFunctionsAgent calls search("golang")
//		scripted.Text("Go is a programming language."), // and then finishes
//	)
//	agent := agents.NewOpenAIFunctionsAgent(m, []tools.Tool{search})
//	out, err := chains.Run(ctx, agents.NewExecutor(agent), "What is Go?")
//	reqs := m.Requests() // what the model saw, turn by turn
//
// # Steps
//
// Steps are consumed in order, one per GenerateContent call (Call goes through
// GenerateContent). [Text] replies with text, [ToolCall] and [ToolCalls] reply
// with native tool calls, [Fail] makes the call return an error, and [Func]
// decides the step from the request itself. A call made after the script is
// used up returns an error wrapping [ErrExhausted].
//
// # Several agents on one model
//
// A Model answers in arrival order, so agents that share one (a
// coordinator and the children it runs in the background) would take each
// other's steps. [Route] makes one model value out of several scripts: each
// request goes to the first route whose match accepts it ([Declares]: the
// request offers a tool, as a coordinator is offered the work tool;
// [HumanContains]: the agent's input; [Otherwise]: every request).
//
//	llm := scripted.Route(
//		scripted.When(scripted.Declares("work"), coordinator),
//		scripted.Otherwise(researcher),
//	)
//
// # Agent styles
//
// langchaingo's three agents read a model's reply differently:
//
//   - OpenAIFunctionsAgent reads native tool calls
//     (llms.ContentChoice.ToolCalls, with their IDs). Script a call with
//     [FunctionsCall] (the agent's own {"__arg1": input} shape) or [ToolCall]
//     (any arguments; non-__arg1 JSON reaches the tool verbatim), and the final
//     answer with [Text].
//   - OneShotZeroAgent (MRKL) parses "Action: X\nAction Input: Y" and
//     "Final Answer: Z" out of plain text: script it with [ReActCall] and
//     [ReActFinal].
//   - ConversationalAgent parses "Action: X\nAction Input: Y" and "AI: Z" out
//     of plain text: script it with [ConversationalCall] and
//     [ConversationalFinal].
//
// The text helpers are checked against langchaingo's own parsers when they
// are built: a call or answer that the agent would read back differently
// (for example an answer to a ConversationalAgent that itself contains "AI:")
// becomes a step whose request fails with a clear error instead of silently
// steering the agent somewhere else.
//
// # Fidelity
//
// The model honours the request's context (a call whose context is already
// done returns the context's error, consumes no step and is not recorded) and
// calls the request's streaming function once with a text reply. It ignores
// every other call option, including stop words; they are recorded.
package scripted
