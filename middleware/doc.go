// Package middleware is the framework-neutral, model-facing half of
// agentwork: the Backgroundable marker, preparation of an agent's tool map
// (wrapped children plus one automatic work tool), run_in_background
// parsing, the work tool's JSON contract, the boundary status block and
// guidance delivery; and, for children that declare updates, the
// emit_update tool (UpdateTool), the coordinator's updates block
// (UpdatesBlock) and the no-answer note (NoAnswer). It imports only the
// standard library and work.
//
//	research := middleware.Backgroundable(middleware.Child{Description: "Researches a topic.",
//		Kind: work.KindAgent, Run: func(ctx context.Context, topic string) (string, error) { return "findings", nil }})
//	set, err := middleware.Prepare(work.New(), work.NewOwner("coordinator"), map[string]any{"research": research})
//	tools := set.Tools() // research, then the automatic work tool
//	ref, _ := tools[0].Call(ctx, `{"input":"Go generics","run_in_background":true}`) // {"kind":"work.ref",...}
//
// An adapter (adapters/langchaingo) wraps these tools in its framework's
// types; ExampleBackgroundable runs the whole exchange.
//
// Two opt-in departures from the crux contract, off by default, are
// written here once, over the work.Engine API, so that they hold on every
// engine: a call made without run_in_background that moves to the
// background after a bound (Child.AutoBackground, the Kit's default
// WithAutoBackground given to PrepareWith), and background as a child's
// default (Child.BackgroundByDefault).
//
// Misuse is a stable error, never a panic: Prepare's errors wrap the
// sentinels of this package (ErrNilEngine, ErrInvalidChildName, ...) or the
// engine's refusal (work.ErrClosed); the tools answer a nil context, an
// input over a child's MaxInputBytes, and a child call or list after
// Kit.Release, with the error object (codes nil_context, input_too_large,
// released), and the work tool's id actions after Release with
// {"status":"not_found"}.
package middleware
