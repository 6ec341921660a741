package langchaingo

import (
	"errors"
	"fmt"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
)

// ErrToolsNotSent is returned (wrapped, with what to use instead) when a
// function-calling agent would run on a client that sends no tools to the
// model: langchaingo v0.1.14's llms/ollama drops them (and refuses the
// agent's tool-call messages). Use langchaingo's OpenAI client at Ollama's
// OpenAI-compatible endpoint instead. Prepare, Retrofit and FromExecutor
// report it when they can see the agent; a coordinator's Model reports it
// on the agent's first request.
var ErrToolsNotSent = errors.New("langchaingo: this client sends no tools to the model")

// errToolsNotSent explains ErrToolsNotSent for a client.
func errToolsNotSent(m llms.Model) error {
	return fmt.Errorf("%w: %T (langchaingo v0.1.14's llms/ollama) drops the tools of a function-calling agent such as OpenAIFunctionsAgent, which would run with none; "+
		"use langchaingo's OpenAI client at Ollama's OpenAI-compatible endpoint: openai.New(openai.WithBaseURL(\"http://<ollama host>/v1\"), openai.WithModel(<model>), openai.WithToken(\"ollama\")), "+
		"or a text agent (OneShot, Conversational), which writes its tools into the prompt", ErrToolsNotSent, innermost(m))
}

// isOpenAI reports whether m is langchaingo's OpenAI client, seeing through
// wrappers (logging, tracing, retries) that expose it with an
// Unwrap() llms.Model method.
func isOpenAI(m llms.Model) bool {
	_, ok := innermost(m).(*openai.LLM)
	return ok
}

// sendsTools reports whether m's client sends tools to the model:
// langchaingo v0.1.14's llms/ollama does not.
func sendsTools(m llms.Model) bool {
	_, ok := innermost(m).(*ollama.LLM)
	return !ok
}

// innermost follows Unwrap() llms.Model methods (at most 32).
func innermost(m llms.Model) llms.Model {
	for range 32 {
		u, ok := m.(interface{ Unwrap() llms.Model })
		if !ok {
			return m
		}
		next := u.Unwrap()
		if next == nil {
			return m
		}
		m = next
	}
	return m
}
