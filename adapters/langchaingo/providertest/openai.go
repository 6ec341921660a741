package providertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// NewOpenAI starts a fake OpenAI chat-completions server answering with
// script. Point langchaingo's client at it with
// openai.New(openai.WithBaseURL(srv.BaseURL()), openai.WithToken("test")).
func NewOpenAI(t testing.TB, script Script, opts ...Option) *Server {
	t.Helper()
	return newServer(t, "openai", script, opts, routes(openAIEndpoint(), "/v1/chat/completions", "/chat/completions"))
}

// StartOpenAI starts the same server as NewOpenAI without a test, for a demo,
// a benchmark or a program that runs agents offline. The caller must call
// Close; Err reports what would have failed a test. It fails only for a
// nil script.
func StartOpenAI(script Script, opts ...Option) (*Server, error) {
	return startServer(nil, "openai", script, opts, routes(openAIEndpoint(), "/v1/chat/completions", "/chat/completions"))
}

func openAIEndpoint() endpoint {
	return endpoint{
		api:        "openai",
		parse:      parseOpenAI,
		check:      checkOpenAI,
		write:      writeOpenAI,
		writeError: writeOpenAIError,
		callID:     func(n int) string { return fmt.Sprintf("call_fake%015d", n) },
	}
}

type oaiFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

type oaiToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaiRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCalls  []oaiToolCall   `json:"tool_calls"`
		ToolCallID string          `json:"tool_call_id"`
	} `json:"messages"`
	Tools []struct {
		Type     string      `json:"type"`
		Function oaiFunction `json:"function"`
	} `json:"tools"`
	Functions []oaiFunction `json:"functions"`
	Stop      any           `json:"stop"`
	Stream    bool          `json:"stream"`
}

func parseOpenAI(req *Request) error {
	var in oaiRequest
	if err := json.Unmarshal(req.Body, &in); err != nil {
		return fmt.Errorf("invalid JSON body: %v", err)
	}
	req.Model, req.Stream = in.Model, in.Stream
	switch s := in.Stop.(type) {
	case string:
		req.Stop = []string{s}
	case []any:
		for _, v := range s {
			if str, ok := v.(string); ok {
				req.Stop = append(req.Stop, str)
			}
		}
	}
	var system []string
	for i, m := range in.Messages {
		text, err := textOf(m.Content)
		if err != nil {
			return fmt.Errorf("messages[%d]: %v", i, err)
		}
		msg := Message{Role: m.Role}
		switch m.Role {
		case "tool":
			msg.ToolResults = []ToolResult{{CallID: m.ToolCallID, Content: text}}
		case "system", "developer":
			system = append(system, text)
			msg.Text = text
		default:
			msg.Text = text
		}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		req.Messages = append(req.Messages, msg)
	}
	req.System = strings.Join(system, "\n")
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	for _, f := range in.Functions {
		req.Tools = append(req.Tools, Tool(f))
	}
	return nil
}

func checkOpenAI(req *Request) (int, string) {
	bad := http.StatusBadRequest
	if req.Model == "" {
		return bad, "you must provide a model parameter"
	}
	if req.Stream {
		return bad, "providertest: streamed chat completions are not emulated"
	}
	if len(req.Messages) == 0 {
		return bad, "'messages' must contain at least one message"
	}
	if msg := checkToolNames(req.Tools); msg != "" {
		return bad, msg
	}
	var pending []string // call ids of the last assistant message not yet answered
	for i, m := range req.Messages {
		switch m.Role {
		case "system", "developer", "user", "assistant", "tool", "function":
		default:
			return bad, fmt.Sprintf("messages[%d]: invalid role %q", i, m.Role)
		}
		if m.Role == "tool" {
			id := m.ToolResults[0].CallID
			j := indexOf(pending, id)
			if j < 0 {
				return bad, fmt.Sprintf("messages[%d]: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (tool_call_id %q)", i, id)
			}
			pending = append(pending[:j], pending[j+1:]...)
			continue
		}
		if len(pending) > 0 {
			return bad, fmt.Sprintf("an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; these did not have response messages: %s", strings.Join(pending, ", "))
		}
		for _, tc := range m.ToolCalls {
			if tc.ID == "" {
				return bad, fmt.Sprintf("messages[%d]: a tool call has no id", i)
			}
			pending = append(pending, tc.ID)
		}
	}
	if len(pending) > 0 {
		return bad, fmt.Sprintf("an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; these did not have response messages: %s", strings.Join(pending, ", "))
	}
	return 0, ""
}

func writeOpenAI(w http.ResponseWriter, req *Request, reply Reply) error {
	msg := map[string]any{"role": "assistant", "content": nil}
	if reply.Text != "" || len(reply.ToolCalls) == 0 {
		msg["content"] = reply.Text
	}
	finish := "stop"
	if len(reply.ToolCalls) > 0 {
		calls := make([]map[string]any, len(reply.ToolCalls))
		for i, tc := range reply.ToolCalls {
			calls[i] = map[string]any{"id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}}
		}
		msg["tool_calls"] = calls
		finish = "tool_calls"
	}
	prompt, completion := len(req.Body)/4, (len(reply.Text)+len(fmt.Sprint(reply.ToolCalls)))/4
	return writeJSON(w, http.StatusOK, map[string]any{
		"id":      fmt.Sprintf("chatcmpl-fake-%d", req.N),
		"object":  "chat.completion",
		"created": 1700000000 + req.N,
		"model":   req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
		"usage":   map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
	})
}

func writeOpenAIError(w http.ResponseWriter, status int, msg string) {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	_ = writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err = w.Write(b)
	return err
}

func isJSONObject(s string) bool {
	var m map[string]any
	return json.Unmarshal([]byte(s), &m) == nil && m != nil
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}
