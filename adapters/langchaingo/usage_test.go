package langchaingo_test

import (
	"encoding/json"
	"testing"

	"github.com/tmc/langchaingo/llms"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	pt "github.com/agentwork/agentwork/adapters/langchaingo/providertest"
)

// TestResponseUsagePerClient reads the usage each real client reports from
// its fake server's reply: the fakes answer with usage computed from the
// request body and the reply (as providertest documents), in each
// provider's own wire shape.
func TestResponseUsagePerClient(t *testing.T) {
	const text = "Go is a programming language."
	tests := []struct {
		provider string
		output   func(reply string) int64
	}{
		{"openai", func(r string) int64 { return int64(len(r)+len("[]")) / 4 }},
		{"ollama-openai-v1", func(r string) int64 { return int64(len(r)+len("[]")) / 4 }},
		{"anthropic", func(r string) int64 { return int64(len(r))/4 + 1 }},
		{"ollama-native", func(r string) int64 { return int64(len(r))/4 + 1 }},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			srv, llm := providerNamed(t, tt.provider).start(t, pt.Say(text))
			resp, err := llm.GenerateContent(t.Context(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "What is Go?")})
			if err != nil {
				t.Fatal(err)
			}
			in, out, ok := lc.ResponseUsage(resp)
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			wantIn := int64(len(reqs[0].Body) / 4)
			if !ok || in != wantIn || out != tt.output(text) {
				t.Fatalf("usage = %d, %d, %v; want %d, %d", in, out, ok, wantIn, tt.output(text))
			}
		})
	}
}

// TestResponseUsageShapes covers recorded response shapes: googleai's
// (int32 counts under both its own and the standardized keys, copied into
// each candidate), anthropic's split reply (usage in every block's choice,
// not summed), numbers decoded from JSON, and responses without usage.
func TestResponseUsageShapes(t *testing.T) {
	choice := func(info map[string]any) *llms.ContentChoice { return &llms.ContentChoice{GenerationInfo: info} }
	tests := []struct {
		name    string
		resp    *llms.ContentResponse
		in, out int64
		ok      bool
	}{
		{"googleai", &llms.ContentResponse{Choices: []*llms.ContentChoice{
			choice(map[string]any{"input_tokens": int32(12), "output_tokens": int32(5), "total_tokens": int32(17),
				"PromptTokens": int32(12), "CompletionTokens": int32(5), "TotalTokens": int32(17), "ThinkingTokens": 0}),
			choice(map[string]any{"PromptTokens": int32(12), "CompletionTokens": int32(5)}),
		}}, 12, 5, true},
		{"anthropic split reply", &llms.ContentResponse{Choices: []*llms.ContentChoice{
			choice(map[string]any{"InputTokens": 30, "OutputTokens": 9, "CacheReadInputTokens": 0}),
			choice(map[string]any{"InputTokens": 30, "OutputTokens": 9}),
		}}, 30, 9, true},
		{"json numbers", &llms.ContentResponse{Choices: []*llms.ContentChoice{
			choice(map[string]any{"prompt_tokens": json.Number("7"), "completion_tokens": float64(3)}),
		}}, 7, 3, true},
		{"usage in a later choice", &llms.ContentResponse{Choices: []*llms.ContentChoice{
			nil, choice(nil), choice(map[string]any{"InputTokens": int64(4), "OutputTokens": uint32(2)}),
		}}, 4, 2, true},
		{"openai without a usage object", &llms.ContentResponse{Choices: []*llms.ContentChoice{
			choice(map[string]any{"PromptTokens": 0, "CompletionTokens": 0, "TotalTokens": 0}),
		}}, 0, 0, false},
		{"no generation info", &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "x"}}}, 0, 0, false},
		{"nil", nil, 0, 0, false},
		{"negative and strings", &llms.ContentResponse{Choices: []*llms.ContentChoice{
			choice(map[string]any{"PromptTokens": -5, "CompletionTokens": "12"}),
		}}, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, out, ok := lc.ResponseUsage(tt.resp)
			if in != tt.in || out != tt.out || ok != tt.ok {
				t.Fatalf("usage = %d, %d, %v; want %d, %d, %v", in, out, ok, tt.in, tt.out, tt.ok)
			}
		})
	}
}
