package providertest_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
	"go.uber.org/goleak"

	pt "github.com/agentwork/agentwork/adapters/langchaingo/providertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recTB records a server's test failures instead of failing the test, so
// that the tests can check that a server fails its test when it must.
type recTB struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (r *recTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recTB) Helper()          {}
func (r *recTB) failures() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.errs, "\n")
}
func (r *recTB) end() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func post(t *testing.T, url, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var textMsg = []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hello")}

// TestClientsRoundTrip: each real client reads each server's replies: text,
// parallel tool calls, and (anthropic) text with several tool_use blocks.
func TestClientsRoundTrip(t *testing.T) {
	ctx := context.Background()
	script := func() pt.Script {
		return pt.Sequence(pt.Say("plain text"), pt.SayThenCall("let me look", pt.Call("a", `{"x":1}`), pt.Call("b", `{"y":"z"}`)))
	}
	oai := pt.NewOpenAI(t, script())
	ant := pt.NewAnthropic(t, script())
	oll := pt.NewOllama(t, script())
	oaiLLM, _ := openai.New(openai.WithBaseURL(oai.BaseURL()), openai.WithToken("k"), openai.WithModel("gpt-4o-mini"))
	antLLM, _ := anthropic.New(anthropic.WithBaseURL(ant.BaseURL()), anthropic.WithToken("k"), anthropic.WithModel("claude-sonnet-4-5"))
	ollV1, _ := openai.New(openai.WithBaseURL(oll.OpenAIBaseURL()), openai.WithToken("ollama"), openai.WithModel("llama3.1"))
	for _, tc := range []struct {
		name    string
		llm     llms.Model
		choices int // choices of the text+calls reply
	}{{"openai", oaiLLM, 1}, {"anthropic", antLLM, 3}, {"ollama /v1", ollV1, 1}} {
		resp, err := tc.llm.GenerateContent(ctx, textMsg)
		if err != nil || resp.Choices[0].Content != "plain text" {
			t.Fatalf("%s: text reply = %+v, %v", tc.name, resp, err)
		}
		resp, err = tc.llm.GenerateContent(ctx, textMsg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(resp.Choices) != tc.choices {
			t.Errorf("%s: %d choices, want %d", tc.name, len(resp.Choices), tc.choices)
		}
		var calls []llms.ToolCall
		var text string
		for _, c := range resp.Choices {
			calls = append(calls, c.ToolCalls...)
			text += c.Content
		}
		if text != "let me look" || len(calls) != 2 || calls[0].FunctionCall.Name != "a" || calls[1].FunctionCall.Arguments != `{"y":"z"}` || calls[0].ID == "" || calls[0].ID == calls[1].ID {
			t.Errorf("%s: text %q, calls %+v", tc.name, text, calls)
		}
	}
	// Ollama's native API: streamed NDJSON by default, as Ollama does.
	oll2 := pt.NewOllama(t, pt.Sequence(pt.Say("streamed"), pt.Say("whole")))
	native2, _ := ollama.New(ollama.WithServerURL(oll2.BaseURL()), ollama.WithModel("llama3.1"))
	if got, err := native2.Call(ctx, "hi"); err != nil || got != "streamed" {
		t.Errorf("native chat = %q, %v", got, err)
	}
	if code, body := post(t, oll2.URL()+"/api/chat", `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":false}`); code != 200 || !strings.Contains(body, `"content":"whole"`) || strings.Count(body, "\n") > 0 {
		t.Errorf("stream false: %d %q, want one JSON object", code, body)
	}
	if r := oll2.Requests(); !r[0].Stream || r[1].Stream {
		t.Errorf("Stream = %v, %v; want true (omitted) then false", r[0].Stream, r[1].Stream)
	}
}

// TestServersRefuseWhatTheRealAPIRefuses: a request the real API would
// refuse gets the provider's error and fails the test.
func TestServersRefuseWhatTheRealAPIRefuses(t *testing.T) {
	anthropicHeaders := []string{"x-api-key", "k", "anthropic-version", "2023-06-01", "content-type", "application/json"}
	for _, tc := range []struct {
		name, api, body, want string
		header                []string
	}{
		{"openai: no model", "openai", `{"messages":[{"role":"user","content":"hi"}]}`, "model", nil},
		{"openai: duplicate tools", "openai", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"a"}}]}`, "unique", nil},
		{"openai: unanswered call", "openai", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"a","arguments":"{}"}}]},{"role":"user","content":"next"}]}`, "c1", nil},
		{"openai: stray tool result", "openai", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"c9","content":"x"}]}`, "c9", nil},
		{"openai: schema not an object", "openai", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"a","parameters":{"type":"string"}}}]}`, "type object", nil},
		{"anthropic: no api key", "anthropic", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, "x-api-key", []string{"anthropic-version", "2023-06-01"}},
		{"anthropic: no max_tokens", "anthropic", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "max_tokens", anthropicHeaders},
		{"anthropic: tool_result without tool_use", "anthropic", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"ok"},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_x","content":"r"}]}]}`, "toolu_x", anthropicHeaders},
		{"anthropic: tool_use without result", "anthropic", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_y","name":"a","input":{}}]},{"role":"user","content":"next"}]}`, "toolu_y", anthropicHeaders},
		{"anthropic: first message from assistant", "anthropic", `{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":"hi"}]}`, "first message", anthropicHeaders},
		{"ollama: no model", "ollama", `{"messages":[{"role":"user","content":"hi"}]}`, "model is required", nil},
		{"malformed JSON", "openai", `{"model":`, "invalid JSON", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recTB{TB: t}
			defer rec.end()
			var srv *pt.Server
			path := "/v1/chat/completions"
			switch tc.api {
			case "openai":
				srv = pt.NewOpenAI(rec, pt.Say("must not be asked"))
			case "anthropic":
				srv, path = pt.NewAnthropic(rec, pt.Say("must not be asked")), "/v1/messages"
			case "ollama":
				srv, path = pt.NewOllama(rec, pt.Say("must not be asked")), "/api/chat"
			}
			code, body := post(t, srv.URL()+path, tc.body, tc.header...)
			if code < 400 || !strings.Contains(body, tc.want) {
				t.Errorf("reply %d %s, want an error mentioning %q", code, body, tc.want)
			}
			if !strings.Contains(rec.failures(), tc.want) {
				t.Errorf("test failures %q, want one mentioning %q", rec.failures(), tc.want)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("recorded %d requests, want 1", n)
			}
		})
	}
}

// TestServerBounds: requests over the count and body limits, a used-up
// script and an unmatched route fail the test and get an error.
func TestServerBounds(t *testing.T) {
	ok := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	t.Run("max requests", func(t *testing.T) {
		rec := &recTB{TB: t}
		defer rec.end()
		srv := pt.NewOpenAI(rec, pt.Say("x"), pt.WithMaxRequests(2))
		for i := range 3 {
			code, _ := post(t, srv.BaseURL()+"/chat/completions", ok)
			if want := map[bool]int{true: 200, false: 429}[i < 2]; code != want {
				t.Errorf("request %d: status %d, want %d", i+1, code, want)
			}
		}
		if !strings.Contains(rec.failures(), "over the limit of 2") {
			t.Errorf("failures %q", rec.failures())
		}
	})
	t.Run("max body", func(t *testing.T) {
		rec := &recTB{TB: t}
		defer rec.end()
		srv := pt.NewOpenAI(rec, pt.Say("x"), pt.WithMaxBodyBytes(64))
		code, _ := post(t, srv.BaseURL()+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"`+strings.Repeat("a", 100)+`"}]}`)
		if code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.failures(), "over 64 bytes") {
			t.Errorf("status %d, failures %q", code, rec.failures())
		}
	})
	t.Run("script used up and no route", func(t *testing.T) {
		rec := &recTB{TB: t}
		defer rec.end()
		seq := pt.Sequence(pt.Say("once"))
		srv := pt.NewOpenAI(rec, pt.Route(pt.When(pt.FirstUserContains("hi"), seq)))
		for range 2 {
			post(t, srv.BaseURL()+"/chat/completions", ok)
		}
		code, _ := post(t, srv.BaseURL()+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"other"}]}`)
		if code != 500 || !strings.Contains(rec.failures(), "script used up") || !strings.Contains(rec.failures(), "no route matches") {
			t.Errorf("status %d, failures %q", code, rec.failures())
		}
	})
}

// TestServerStopsWithTheTest: a script that waits is released when the
// test ends (its request's context ends), so the test never hangs, and the
// recorded body is exactly what was sent.
func TestServerStopsWithTheTest(t *testing.T) {
	rec := &recTB{TB: t}
	entered := make(chan struct{})
	srv := pt.NewOpenAI(rec, pt.ScriptFunc(func(req *pt.Request) pt.Reply {
		close(entered)
		<-req.Context().Done()
		return pt.Fail(503, "stopped")
	}))
	body := `{"model":"m","messages":[{"role":"user","content":"wait"}]}`
	done := make(chan error, 1)
	go func() {
		resp, err := http.Post(srv.BaseURL()+"/chat/completions", "application/json", strings.NewReader(body))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-entered
	if r := srv.Requests(); len(r) != 1 || !bytes.Equal(r[0].Body, []byte(body)) || r[0].FirstUserText() != "wait" {
		t.Errorf("recorded %+v", r)
	}
	rec.end() // the test's cleanups: the server stops
	<-done
}

// TestStartWithoutTest: the Start constructors need no testing.TB: the
// real clients work against them, Err reports what would fail a test, and
// Close stops them.
func TestStartWithoutTest(t *testing.T) {
	ctx := context.Background()
	if _, err := pt.StartOpenAI(nil); err == nil {
		t.Fatal("StartOpenAI(nil) succeeded")
	}
	oai, err := pt.StartOpenAI(pt.Sequence(pt.Say("hello from openai")))
	if err != nil {
		t.Fatal(err)
	}
	defer oai.Close()
	llm, err := openai.New(openai.WithBaseURL(oai.BaseURL()), openai.WithToken("test"), openai.WithModel("m"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := llms.GenerateFromSinglePrompt(ctx, llm, "hi"); err != nil || got != "hello from openai" {
		t.Fatalf("openai: %q, %v", got, err)
	}
	if oai.Err() != nil {
		t.Fatalf("Err = %v", oai.Err())
	}
	if _, err := llms.GenerateFromSinglePrompt(ctx, llm, "again"); err == nil {
		t.Fatal("a used-up script answered")
	}
	if err := oai.Err(); err == nil || !strings.Contains(err.Error(), "script used up") {
		t.Fatalf("Err = %v", err)
	}

	ant, err := pt.StartAnthropic(pt.Say("hello from anthropic"))
	if err != nil {
		t.Fatal(err)
	}
	defer ant.Close()
	allm, err := anthropic.New(anthropic.WithBaseURL(ant.BaseURL()), anthropic.WithToken("test"), anthropic.WithModel("m"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := llms.GenerateFromSinglePrompt(ctx, allm, "hi"); err != nil || got != "hello from anthropic" || ant.Err() != nil {
		t.Fatalf("anthropic: %q, %v, %v", got, err, ant.Err())
	}

	oll, err := pt.StartOllama(pt.Say("hello from ollama"))
	if err != nil {
		t.Fatal(err)
	}
	ollm, err := ollama.New(ollama.WithServerURL(oll.BaseURL()), ollama.WithModel("m"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := llms.GenerateFromSinglePrompt(ctx, ollm, "hi"); err != nil || got != "hello from ollama" || oll.Err() != nil {
		t.Fatalf("ollama: %q, %v, %v", got, err, oll.Err())
	}
	oll.Close()
	oll.Close() // idempotent
	if _, err := llms.GenerateFromSinglePrompt(ctx, ollm, "after close"); err == nil {
		t.Fatal("a closed server answered")
	}
}
