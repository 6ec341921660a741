package providertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// NewAnthropic starts a fake Anthropic messages server answering with
// script. Point langchaingo's client at it with
// anthropic.New(anthropic.WithBaseURL(srv.BaseURL()), anthropic.WithToken("test")).
//
// A Reply's text becomes a text block and each tool call a tool_use block,
// in one message, so a reply with text and several calls reaches
// langchaingo as one choice per block, as a real reply does.
func NewAnthropic(t testing.TB, script Script, opts ...Option) *Server {
	t.Helper()
	return newServer(t, "anthropic", script, opts, routes(anthropicEndpoint(), "/v1/messages", "/messages"))
}

// StartAnthropic starts the same server as NewAnthropic without a test, for a demo,
// a benchmark or a program that runs agents offline. The caller must call
// Close; Err reports what would have failed a test. It fails only for a
// nil script.
func StartAnthropic(script Script, opts ...Option) (*Server, error) {
	return startServer(nil, "anthropic", script, opts, routes(anthropicEndpoint(), "/v1/messages", "/messages"))
}

func anthropicEndpoint() endpoint {
	return endpoint{
		api:        "anthropic",
		parse:      parseAnthropic,
		check:      checkAnthropic,
		write:      writeAnthropic,
		writeError: writeAnthropicError,
		callID:     func(n int) string { return fmt.Sprintf("toolu_01Fake%016d", n) },
	}
}

type antBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

type antRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"input_schema"`
	} `json:"tools"`
	StopSequences []string `json:"stop_sequences"`
	Stream        bool     `json:"stream"`
}

// antBlocks decodes a content value: a string (one text block) or blocks.
func antBlocks(raw json.RawMessage) ([]antBlock, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return []antBlock{{Type: "text", Text: s}}, nil
	}
	var blocks []antBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, fmt.Errorf("content is neither a string nor an array of blocks: %s", clip(string(raw), 80))
	}
	return blocks, nil
}

func parseAnthropic(req *Request) error {
	var in antRequest
	if err := json.Unmarshal(req.Body, &in); err != nil {
		return fmt.Errorf("invalid JSON body: %v", err)
	}
	req.Model, req.Stream, req.Stop = in.Model, in.Stream, in.StopSequences
	sys, err := antBlocks(in.System)
	if err != nil {
		return fmt.Errorf("system: %v", err)
	}
	var texts []string
	for _, b := range sys {
		texts = append(texts, b.Text)
	}
	req.System = joinNonEmpty(texts, "\n")
	for i, m := range in.Messages {
		blocks, err := antBlocks(m.Content)
		if err != nil {
			return fmt.Errorf("messages.%d: %v", i, err)
		}
		msg := Message{Role: m.Role}
		var texts []string
		for j, b := range blocks {
			switch b.Type {
			case "text":
				texts = append(texts, b.Text)
			case "tool_use":
				if !isJSONObject(string(b.Input)) {
					return fmt.Errorf("messages.%d.content.%d: tool_use input must be an object", i, j)
				}
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
			case "tool_result":
				inner, err := antBlocks(b.Content)
				if err != nil {
					return fmt.Errorf("messages.%d.content.%d: %v", i, j, err)
				}
				var parts []string
				for _, ib := range inner {
					parts = append(parts, ib.Text)
				}
				msg.ToolResults = append(msg.ToolResults, ToolResult{CallID: b.ToolUseID, Content: joinNonEmpty(parts, "\n")})
			case "image", "thinking", "redacted_thinking", "document":
			default:
				return fmt.Errorf("messages.%d.content.%d: unknown block type %q", i, j, b.Type)
			}
		}
		msg.Text = joinNonEmpty(texts, "\n")
		req.Messages = append(req.Messages, msg)
	}
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, Tool{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
	}
	return nil
}

func checkAnthropic(req *Request) (int, string) {
	bad := http.StatusBadRequest
	if len(req.Header["X-Api-Key"]) == 0 || req.Header["X-Api-Key"][0] == "" {
		return http.StatusUnauthorized, "x-api-key header is required"
	}
	if len(req.Header["Anthropic-Version"]) == 0 {
		return bad, "anthropic-version: header is required"
	}
	var in struct {
		MaxTokens int `json:"max_tokens"`
	}
	_ = json.Unmarshal(req.Body, &in)
	switch {
	case req.Model == "":
		return bad, "model: field required"
	case in.MaxTokens < 1:
		return bad, "max_tokens: field required"
	case req.Stream:
		return bad, "providertest: streamed messages are not emulated"
	case len(req.Messages) == 0:
		return bad, "messages: at least one message is required"
	case req.Messages[0].Role != "user":
		return bad, "messages: first message must use the \"user\" role"
	}
	if msg := checkToolNames(req.Tools); msg != "" {
		return bad, "tools: " + msg
	}
	// Consecutive messages of one role form one turn (the API merges them).
	type turn struct {
		role    string
		uses    []string
		results []string
		first   int
	}
	var turns []turn
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return bad, fmt.Sprintf("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		if len(turns) == 0 || turns[len(turns)-1].role != m.Role {
			turns = append(turns, turn{role: m.Role, first: i})
		}
		tt := &turns[len(turns)-1]
		for _, tc := range m.ToolCalls {
			tt.uses = append(tt.uses, tc.ID)
		}
		for _, tr := range m.ToolResults {
			tt.results = append(tt.results, tr.CallID)
		}
	}
	for i, tt := range turns {
		if tt.role == "user" && len(tt.results) > 0 {
			var prev []string
			if i > 0 {
				prev = turns[i-1].uses
			}
			for _, id := range tt.results {
				if indexOf(prev, id) < 0 {
					return bad, fmt.Sprintf("messages.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", tt.first, id)
				}
			}
		}
		if tt.role == "assistant" && len(tt.uses) > 0 {
			var next []string
			if i+1 < len(turns) {
				next = turns[i+1].results
			}
			for _, id := range tt.uses {
				if indexOf(next, id) < 0 {
					return bad, fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", tt.first, id)
				}
			}
		}
	}
	return 0, ""
}

func writeAnthropic(w http.ResponseWriter, req *Request, reply Reply) error {
	var content []any
	if reply.Text != "" || len(reply.ToolCalls) == 0 {
		content = append(content, map[string]any{"type": "text", "text": reply.Text})
	}
	for _, tc := range reply.ToolCalls {
		content = append(content, map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": json.RawMessage(tc.Arguments)})
	}
	stop := "end_turn"
	if len(reply.ToolCalls) > 0 {
		stop = "tool_use"
	}
	return writeJSON(w, http.StatusOK, map[string]any{
		"id":            fmt.Sprintf("msg_fake%d", req.N),
		"type":          "message",
		"role":          "assistant",
		"model":         req.Model,
		"content":       content,
		"stop_reason":   stop,
		"stop_sequence": nil,
		"usage":         map[string]any{"input_tokens": len(req.Body) / 4, "output_tokens": len(reply.Text)/4 + 1},
	})
}

func writeAnthropicError(w http.ResponseWriter, status int, msg string) {
	typ := "invalid_request_error"
	switch {
	case status == http.StatusUnauthorized:
		typ = "authentication_error"
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case status == http.StatusRequestEntityTooLarge:
		typ = "request_too_large"
	case status >= 500:
		typ = "api_error"
	}
	_ = writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}
