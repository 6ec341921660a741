// Package langchaingo makes a langchaingo app able to run child agents (and
// long functions) in the background by changing a few lines.
//
//	sup := work.New(work.WithObserver(obs))
//	researcher := langchaingo.FromExecutor("research", "Researches a topic.", researcherExecutor)
//	kit, err := langchaingo.Prepare(ctx, sup, llm, []tools.Tool{
//		calculator,                              // an ordinary tool: untouched
//		langchaingo.Backgroundable(researcher),  // can run with run_in_background
//	})
//	agent := agents.NewOneShotAgent(kit.Model(), kit.Tools())
//	executor := agents.NewExecutor(agent)
//
// Prepare wraps the backgroundable children, adds the automatic work tool,
// and returns a Model that, before every model request of the coordinator,
// appends the boundary status block as a final user message, and gives the
// function-calling agent real JSON schemas (so run_in_background is visible).
// Every child runs isolated, on a fresh context, with its own Model wrapper
// that delivers guidance and stops a cancelled child at its next
// model-request boundary.
//
// NewFunction makes a function a child and FromTool makes any existing
// tool one, so that Backgroundable can run it in the background. NewJob
// makes a job at another service a child (submit and await steps, polled
// by the engine with backoff, holding no goroutine or running slot between
// polls), and WithApproval makes a child's launches wait, queued, for the
// application's approval (work.Engine's Pending, Approve, Deny). WithUpdates lets a child
// report bounded, ordered updates while it runs (an agent child through the
// automatic emit_update tool, a function child with work.ReportUpdate) and
// ask a question, answered as guidance at its next model request;
// ReportUpdates also hands them to the coordinator, on its next resume, as
// a block of untrusted child content.
//
// Wrapped tools never return a Go error (langchaingo's Executor aborts the
// whole run on one): bad input and failures come back as the error object.
//
// OneShot and Conversational agents show the model only tool names and
// descriptions, never a schema: a prepared child's description therefore
// ends with its input object (for example `Input: a JSON object {"input":
// string (required), "run_in_background": boolean}.`), which the model
// writes after "Action Input:".
//
// Kit.RunUntilSettled runs the coordinator and, whenever a run ends while
// its background Work is still live, waits for the next settlement and
// runs it again with a framed, content-free notice (NoticeHeader), until
// nothing is live or unannounced, a resume cap is hit or ctx ends. Agent
// children report progress by themselves (model requests and tool calls,
// work.Status.Progress). A launch carries the provider-issued tool-call id
// when the model's reply has one (OpenAIFunctionsAgent): a retried launch
// gets the same work.ref. Text agents' calls have none and are never
// deduplicated; no id is made up.
//
// Misuse is a stable error, never a panic: every preparation error wraps a
// sentinel (ErrNilContext, ErrOwnerInUse, middleware.ErrInvalidChildName,
// ..., or work.ErrClosed for a closed engine) for errors.Is; a child input
// over its bound (WithMaxInputBytes, 1 MiB by default) is the error object
// with code input_too_large; after Kit.Release the tools answer with code
// released (launches, foreground calls, list) or {"status":"not_found"}
// (id actions). One WithOwner id has one live Kit per engine instance.
//
// OneShot and Conversational agents render their tools into the prompt when
// they are built, so build them from Kit.Tools and Kit.Model; an
// OpenAIFunctionsAgent reads its Tools on each Plan, so Retrofit can prepare
// one that already exists.
package langchaingo
