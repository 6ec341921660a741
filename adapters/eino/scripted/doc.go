// Package scripted provides a scripted, goroutine-safe Eino chat model
// (model.ToolCallingChatModel) for tests, demos and benchmarks of Eino
// agents: a thin wrapper over the framework-neutral script of the adapter
// conformance suite (middleware/adaptertest.Script), so that one step
// language scripts agents of every framework. It answers each request
// with the next scripted Step and records every request it saw.
//
//	m := scripted.New(
//		scripted.Call("search", `{"query":"golang"}`), // the agent calls search
//		scripted.Text("Go is a programming language."), // and then answers
//	)
//	agent, _ := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Model: m, ...})
//	reqs := m.Requests() // what the model saw, turn by turn
//
// Steps are consumed in order, one per Generate or Stream call. A call
// made after the script is used up returns an error wrapping ErrExhausted.
// A Request is the neutral one (adaptertest.Request): its messages' roles,
// texts, tool calls and tool-call ids, and the tools offered with their
// JSON schemas. Route makes one model out of several scripts, so that a
// coordinator and the children it runs (which would otherwise take each
// other's steps) can share one model value: each request goes to the
// first route whose match accepts it (Declares: the request offers a
// tool, as a coordinator is offered the work tool; HumanContains: the
// agent's input).
//
// A request whose context is already done is recorded, consumes no step
// and returns the context's error. A Model starts no goroutines and holds
// no resources.
package scripted
