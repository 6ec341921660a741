// Package providertest runs fake model providers on httptest servers, so that
// langchaingo's real provider clients (and agents built on them) can be
// tested offline, byte for byte on the wire.
//
//	srv := providertest.NewOpenAI(t, providertest.Sequence(
//		providertest.Calls(providertest.Call("search", `{"__arg1":"golang"}`)),
//		providertest.Say("Go is a programming language."),
//	))
//	llm, _ := openai.New(openai.WithBaseURL(srv.BaseURL()), openai.WithToken("test"))
//	agent := agents.NewOpenAIFunctionsAgent(llm, []tools.Tool{search})
//	out, err := chains.Run(ctx, agents.NewExecutor(agent), "What is Go?")
//	reqs := srv.Requests() // every request body, raw and parsed
//
// # Servers
//
//   - [NewOpenAI] speaks the OpenAI chat-completions API
//     (POST {BaseURL}/chat/completions): text, tool calls and parallel tool
//     calls in one choice.
//   - [NewAnthropic] speaks the Anthropic messages API
//     (POST {BaseURL}/messages): text and several tool_use blocks in one
//     reply, tool_result turns.
//   - [NewOllama] speaks Ollama's native chat API (POST {URL}/api/chat,
//     streamed as NDJSON unless the request says "stream": false, as Ollama
//     does) and its OpenAI-compatible endpoint ({OpenAIBaseURL}/chat/completions).
//
// Outside a test (a demo, a benchmark, a program that runs its agents
// offline), [StartOpenAI], [StartAnthropic] and [StartOllama] start the
// same servers without a testing.TB: the caller closes them, and
// [Server.Err] returns what would have failed a test.
//
// Each server answers every request with its [Script] and records the
// request ([Request]: the raw body and a provider-neutral parse of it). It
// checks what the real API checks and a client can get wrong (a tool
// result that answers no call, a call left unanswered, two tools of one
// name, a missing model or max_tokens): such a request is answered with the
// provider's error status and body, and fails the test. Streaming (SSE) is
// not emulated: a streaming chat-completions or messages request fails.
//
// # Scripts
//
// A [Reply] is itself a Script that always gives that reply. [Sequence]
// answers with its scripts in order, one request each; [ScriptFunc] decides
// from the request (it may wait for the test: its request's context ends
// when the client gives up or the server stops); [Route] sends each request
// to the first route whose match accepts it, so a coordinator and its
// children can share one server. A request no script can answer (a
// used-up Sequence, no matching route) fails the test and gets an HTTP 500.
//
// # Bounds
//
// A server accepts at most 200 requests and 4 MiB per request body by
// default ([WithMaxRequests], [WithMaxBodyBytes]); beyond that it answers
// with an error and fails the test. It stops when the test ends
// (t.Cleanup), or at Close for a started server: waiting scripts see their request's context end first, so a
// stuck script never hangs the test. All methods are safe for concurrent
// use.
package providertest
