package langchaingo

import (
	"encoding/json"
	"math"

	"github.com/tmc/langchaingo/llms"
)

// usageKeys are the GenerationInfo keys under which langchaingo v0.1.14's
// clients report a response's token usage, input key then output key, in
// the order they are tried:
//
//   - llms/openai (and Ollama's OpenAI-compatible endpoint through it),
//     llms/ollama and llms/googleai: PromptTokens, CompletionTokens;
//   - llms/anthropic (and llms/bedrock's Anthropic models): InputTokens,
//     OutputTokens;
//   - llms/googleai also, and clients that copy the providers' JSON
//     names: input_tokens, output_tokens; prompt_tokens,
//     completion_tokens.
//
// Every choice of a response carries the usage of the whole response
// (anthropic copies it into each content block's choice, googleai into
// each candidate's): it is read from the first choice that has it, never
// summed.
var usageKeys = [...][2]string{
	{"PromptTokens", "CompletionTokens"},
	{"InputTokens", "OutputTokens"},
	{"input_tokens", "output_tokens"},
	{"prompt_tokens", "completion_tokens"},
}

// ResponseUsage returns the input and output tokens a provider reported
// for resp, normalized across langchaingo's clients (see the keys above),
// and whether it reported any: a response without usage, or with zero
// input and output tokens (which is how the OpenAI client reports a
// response without a usage object), is unknown. The budget of a child
// counts unknown usage conservatively: its token reservation stays charged.
func ResponseUsage(resp *llms.ContentResponse) (input, output int64, ok bool) {
	if resp == nil {
		return 0, 0, false
	}
	for _, c := range resp.Choices {
		if c == nil || len(c.GenerationInfo) == 0 {
			continue
		}
		for _, k := range usageKeys {
			in, inOK := count(c.GenerationInfo[k[0]])
			out, outOK := count(c.GenerationInfo[k[1]])
			if (inOK || outOK) && in+out > 0 {
				return in, out, true
			}
		}
	}
	return 0, 0, false
}

// count reads a token count of any numeric type a client may use.
func count(v any) (int64, bool) {
	var n int64
	switch x := v.(type) {
	case int:
		n = int64(x)
	case int32:
		n = int64(x)
	case int64:
		n = x
	case uint:
		n = int64(min(uint64(x), math.MaxInt64))
	case uint32:
		n = int64(x)
	case uint64:
		n = int64(min(x, math.MaxInt64))
	case float64:
		if x != x || x < 0 || x > math.MaxInt64 {
			return 0, false
		}
		n = int64(x)
	case float32:
		if x != x || x < 0 || float64(x) > math.MaxInt64 {
			return 0, false
		}
		n = int64(x)
	case json.Number:
		i, err := x.Int64()
		if err != nil {
			return 0, false
		}
		n = i
	default:
		return 0, false
	}
	if n < 0 {
		return 0, false
	}
	return n, true
}
