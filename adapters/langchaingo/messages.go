package langchaingo

import (
	"encoding/json"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// objectArguments returns msgs with every tool call's arguments a JSON
// object: others become {"__arg1": arguments}. msgs is copied only when a
// call changes.
func objectArguments(msgs []llms.MessageContent) []llms.MessageContent {
	out := msgs
	copied := false
	for i, m := range msgs {
		partsCopied := false
		for j, p := range m.Parts {
			tc, ok := p.(llms.ToolCall)
			if !ok || tc.FunctionCall == nil || isJSONObject(tc.FunctionCall.Arguments) {
				continue
			}
			if !copied {
				out = append([]llms.MessageContent(nil), msgs...)
				copied = true
			}
			if !partsCopied {
				out[i].Parts = append([]llms.ContentPart(nil), m.Parts...)
				partsCopied = true
			}
			fc := *tc.FunctionCall
			b, _ := json.Marshal(fc.Arguments) // a string: cannot fail
			fc.Arguments = `{"__arg1":` + string(b) + "}"
			tc.FunctionCall = &fc
			out[i].Parts[j] = tc
		}
	}
	return out
}

func isJSONObject(s string) bool {
	s = strings.TrimLeft(s, " \t\r\n")
	if !strings.HasPrefix(s, "{") {
		return false // fast path: not an object, nothing to decode
	}
	var v map[string]json.RawMessage
	return json.Unmarshal([]byte(s), &v) == nil && v != nil
}

// mergeChoices merges a reply split into several choices into one.
func mergeChoices(resp *llms.ContentResponse) *llms.ContentResponse {
	if resp == nil || len(resp.Choices) < 2 {
		return resp
	}
	merged := &llms.ContentChoice{}
	var texts, reasoning []string
	for _, c := range resp.Choices {
		if c == nil {
			continue
		}
		if c.Content != "" {
			texts = append(texts, c.Content)
		}
		if c.ReasoningContent != "" {
			reasoning = append(reasoning, c.ReasoningContent)
		}
		merged.ToolCalls = append(merged.ToolCalls, c.ToolCalls...)
		if merged.FuncCall == nil {
			merged.FuncCall = c.FuncCall
		}
		if c.StopReason != "" {
			merged.StopReason = c.StopReason
		}
		for k, v := range c.GenerationInfo {
			if merged.GenerationInfo == nil {
				merged.GenerationInfo = map[string]any{}
			}
			if _, ok := merged.GenerationInfo[k]; !ok || isZero(merged.GenerationInfo[k]) {
				merged.GenerationInfo[k] = v
			}
		}
	}
	merged.Content = strings.Join(texts, "\n")
	merged.ReasoningContent = strings.Join(reasoning, "\n")
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{merged}}
}

func isZero(v any) bool { return v == nil || v == "" || v == 0 }
