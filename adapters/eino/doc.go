// Package eino gives an Eino (github.com/cloudwego/eino) ChatModelAgent
// backgroundable children by adding one middleware to it:
//
//	sup := work.New()
//	mw := eino.New(sup)
//	researcher := eino.FromAgent(researchAgent) // a ChatModelAgent with eino.ChildMiddleware() in its Handlers
//	agent, _ := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
//		Model:       chatModel,
//		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{
//			calculator,                        // an ordinary tool: untouched
//			eino.Backgroundable(researcher),   // can run with run_in_background
//		}}},
//		Handlers: []adk.ChatModelAgentMiddleware{mw},
//	})
//	defer mw.Release()
//
// The Middleware's BeforeAgent wraps the children and adds the automatic
// work tool; its WrapModel shows the coordinator's model the status block
// before each request, without saving it into the conversation. Every
// model-facing rule (the work.ref reply, the work tool's JSON, the status
// block, isolation, budgets, guidance, updates) is package middleware's,
// the same as for the langchaingo adapter; this package only meets Eino's
// types. Children run isolated on the engine (the in-process
// *work.Engine, or a durable runner): FromAgent runs an Eino agent
// with a fresh input, NewFunction a function, FromTool an Eino tool,
// NewJob an external job; WithApproval makes launches wait for the
// application. Each launch carries the provider's tool-call id
// (compose.GetToolCallID): a retried launch gets the same work.ref.
// RunUntilSettled runs the coordinator again, with a content-free notice,
// when its background Work settles.
//
// On a durable engine (runners/temporal, runners/restate) a worker
// registers each child's body, Child.Kind and Child.Run, under its name;
// the coordinator's Middleware is made on the runner's Engine. Telemetry
// is the engine's Observer; WithoutToolSpans leaves each tool call's
// execute_tool span to a span-making Eino callbacks.Handler.
//
// Wrapped tools never return a Go error (an Eino agent ends its run on
// one): bad input and failures come back as the error object.
package eino
