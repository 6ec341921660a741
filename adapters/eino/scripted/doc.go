// Package scripted provides a scripted, goroutine-safe Eino chat model
// (model.ToolCallingChatModel) for tests, demos and benchmarks of Eino
// agents: it answers each request with the next scripted Step and records
// every request it saw.
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
// Route makes one model out of several scripts, so that a coordinator and
// the children it runs (which would otherwise take each other's steps)
// can share one model value: each request goes to the first route whose
// match accepts it (Declares: the request offers a tool, as a coordinator
// is offered the work tool; HumanContains: the agent's input).
//
// The model honours the request's context (a call whose context is
// already done returns the context's error, consumes no step and is not
// recorded). A Model starts no goroutines and holds no resources.
package scripted
