// Package adaptertest is the model-facing conformance suite every agent
// framework adapter passes, as work/enginetest is for engines: through a
// scripted model and a real agent of the adapter's framework it checks the
// contract of the crux seed as the model sees it.
//
// The cases (subtests of Run): WorkRef (a background launch returns the
// exact work.ref JSON at once), WorkToolOnce (one work tool iff a child is
// backgroundable, its schema, run_in_background on backgroundable
// children only), PrepareErrors (an authored work tool, a schema that
// declares run_in_background: middleware's sentinels, before any model
// request), Foreground (the exact child output), Projections (status,
// list and result in all seven states, byte for byte on a fake clock),
// ListOrder, ResultWait (timeouts, the 30 s cap and default, completion
// during a wait, failure as state only), Cancel (receipts in every state,
// cooperative cancel at the child's next model request, completion
// allowed to win, an unrelated failure), Detach, Send (receipts, idempotency per
// tool-call id, conflict, in-order delivery at the next model request,
// refusals), NotFound (unknown and foreign ids), StatusBlock (its place,
// bounds and content), Isolation (children see only their own prompt,
// tools, input and no context value of the coordinator's run), Limits and
// BadInput (one error object each, never an aborted run), and the two
// opt-in departures from the crux contract: AutoBackground (a call that
// moves to the background at its bound: the description, the exact
// work.ref at the bound, the status block, the exact output of a call in
// time) and BackgroundDefault (background as a child's default: the
// description, the schema's default, false for the exact output).
//
// # The harness
//
// An adapter supplies an Adapter and calls Run from its own test:
//
//	func TestConformance(t *testing.T) {
//		adaptertest.Run(t, adaptertest.Adapter{Name: "eino", NewCoordinator: newCoordinator})
//	}
//
// NewCoordinator translates a Config into the framework's agents:
//
//   - Config.Model, and each AgentSpec.Model, is a *Script: a
//     framework-neutral scripted model. The adapter wraps it in its
//     framework's model interface with one thin wrapper (langchaingo's
//     llms.Model, Eino's model.ToolCallingChatModel): convert the request's
//     messages (system, user, assistant with tool calls and their ids,
//     tool results with the call id they answer) and offered tool
//     definitions (name, description, JSON schema) to a Request, call
//     Script.Reply, and turn the Reply into the framework's response
//     (text, or tool calls with their ids). The wrapper sits under the
//     adapter's own model wrapping, where a provider would be.
//   - Config.Tools are ordinary tools (Plain) and children (Function,
//     Agent), foreground or Background; a backgroundable child's
//     AutoBackground and BackgroundByDefault go to the adapter's options
//     for them (langchaingo: WithAutoBackground, WithBackgroundDefault). An Agent child is a real agent of
//     the framework (langchaingo: an agents.Executor over an
//     OpenAIFunctionsAgent made a child with FromExecutor; Eino: an
//     adk.ChatModelAgent with the adapter's child middleware) with
//     AgentSpec's instruction, scripted model and Plain tools; its input
//     reaches it as one user message.
//   - The coordinator is an agent of the framework that calls tools
//     natively (langchaingo: OpenAIFunctionsAgent; Eino: ChatModelAgent)
//     with Config.Instruction as its system prompt and the prepared tools
//     (adapter-made work tool included); Coordinator.Run runs one turn and
//     passes ctx to the agent and its tools.
//   - Tool calls of one reply are independent in the suite (a framework
//     that runs them concurrently passes); each has its own provider id,
//     which the adapter must use as the call's identity.
//
// The suite owns the engine (a *work.Engine on a fake clock, given as
// Config.Engine), the owners, the children's bodies and every wait: each
// model request of a scripted coordinator or agent child waits until the
// test answers it, so nothing is timed by sleeping. Run's tests start
// goroutines: call goleak.VerifyTestMain in the adapter's test package.
//
// The package imports the standard library, work, middleware and
// work/enginetest (its Recorder); never a framework.
package adaptertest
