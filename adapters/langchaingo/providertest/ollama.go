package providertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// NewOllama starts a fake Ollama server answering with script, on both of
// Ollama's chat APIs: the native POST /api/chat (point
// ollama.New(ollama.WithServerURL(srv.BaseURL())) at it) and the
// OpenAI-compatible POST /v1/chat/completions (point
// openai.New(openai.WithBaseURL(srv.OpenAIBaseURL()), openai.WithToken("ollama"))
// at it). Like Ollama, /api/chat streams NDJSON unless the request says
// "stream": false. A native reply's tool calls carry no ids, as Ollama's.
func NewOllama(t testing.TB, script Script, opts ...Option) *Server {
	t.Helper()
	return newServer(t, "ollama", script, opts, ollamaRoutes())
}

// StartOllama starts the same server as NewOllama without a test, for a
// demo, a benchmark or a program that runs agents offline. The caller must
// call Close; Err reports what would have failed a test. It fails only for
// a nil script.
func StartOllama(script Script, opts ...Option) (*Server, error) {
	return startServer(nil, "ollama", script, opts, ollamaRoutes())
}

func ollamaRoutes() map[string]endpoint {
	r := routes(ollamaEndpoint(), "/api/chat")
	oai := openAIEndpoint()
	oai.callID = func(n int) string { return fmt.Sprintf("call_%08d", n) }
	r["/v1/chat/completions"] = oai
	return r
}

func ollamaEndpoint() endpoint {
	return endpoint{
		api:   "ollama",
		parse: parseOllama,
		check: checkOllama,
		write: writeOllama,
		writeError: func(w http.ResponseWriter, status int, msg string) {
			_ = writeJSON(w, status, map[string]any{"error": msg})
		},
		callID: func(int) string { return "" },
	}
}

type ollRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role      string `json:"role"`
		Content   string `json:"content"`
		ToolCalls []struct {
			Function struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string      `json:"type"`
		Function oaiFunction `json:"function"`
	} `json:"tools"`
	Stream  *bool `json:"stream"`
	Options struct {
		Stop []string `json:"stop"`
	} `json:"options"`
}

func parseOllama(req *Request) error {
	var in ollRequest
	if err := json.Unmarshal(req.Body, &in); err != nil {
		return fmt.Errorf("invalid JSON body: %v", err)
	}
	req.Model, req.Stop = in.Model, in.Options.Stop
	req.Stream = in.Stream == nil || *in.Stream
	var system []string
	for _, m := range in.Messages {
		msg := Message{Role: m.Role, Text: m.Content}
		if m.Role == "tool" {
			msg = Message{Role: m.Role, ToolResults: []ToolResult{{Content: m.Content}}}
		}
		if m.Role == "system" {
			system = append(system, m.Content)
		}
		for _, tc := range m.ToolCalls {
			args, _ := json.Marshal(tc.Function.Arguments)
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{Name: tc.Function.Name, Arguments: string(args)})
		}
		req.Messages = append(req.Messages, msg)
	}
	req.System = joinNonEmpty(system, "\n")
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return nil
}

func checkOllama(req *Request) (int, string) {
	if req.Model == "" {
		return http.StatusBadRequest, "model is required"
	}
	if msg := checkToolNames(req.Tools); msg != "" {
		return http.StatusBadRequest, msg
	}
	return 0, ""
}

func writeOllama(w http.ResponseWriter, req *Request, reply Reply) error {
	created := time.Date(2025, 1, 1, 0, 0, req.N, 0, time.UTC).Format(time.RFC3339Nano)
	msg := map[string]any{"role": "assistant", "content": reply.Text}
	if len(reply.ToolCalls) > 0 {
		calls := make([]any, len(reply.ToolCalls))
		for i, tc := range reply.ToolCalls {
			calls[i] = map[string]any{"function": map[string]any{"name": tc.Name, "arguments": json.RawMessage(tc.Arguments)}}
		}
		msg["tool_calls"] = calls
	}
	final := map[string]any{
		"model": req.Model, "created_at": created, "done": true, "done_reason": "stop",
		"total_duration": 1000000, "prompt_eval_count": len(req.Body) / 4, "eval_count": len(reply.Text)/4 + 1,
	}
	if !req.Stream {
		final["message"] = msg
		return writeJSON(w, http.StatusOK, final)
	}
	// Streamed as Ollama does: the reply in one chunk, then an empty final one.
	final["message"] = map[string]any{"role": "assistant", "content": ""}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	if err := enc.Encode(map[string]any{"model": req.Model, "created_at": created, "message": msg, "done": false}); err != nil {
		return err
	}
	return enc.Encode(final)
}
