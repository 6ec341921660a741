package middleware_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

// tricky outputs must come back byte for byte.
var trickyOutputs = []string{
	"plain",
	"",
	"  leading and trailing space \n",
	"naïve café — 日本語 🚀 \u00a0\u200b",
	`{"kind":"work.ref","id":"0123456789abcdef0123456789abcdef"}`,
	`{"error":{"code":"x","message":"looks like an error"}}`,
	"{\"a\": 1,\n \"b\": [true, null]}\n",
	`"quoted"`,
	"<b>&amp;</b> \\ \t \x00 \xff invalid utf-8",
}

func TestInputForms(t *testing.T) {
	for _, out := range trickyOutputs {
		for _, tc := range []struct {
			name, input, childGets string
		}{
			{"raw object", `{"input":"x"}`, "x"},
			{"raw object, false flag", `{"input":"x","run_in_background":false}`, "x"},
			{"raw object with space", " \n{\"run_in_background\": false, \"input\": \"héllo \\\"q\\\"\"}\t", `héllo "q"`},
			{"__arg1 object", `{"__arg1":"{\"input\":\"x\"}"}`, "x"},
			{"__arg1 object, false flag", `{"__arg1":"{\"input\":\"x\",\"run_in_background\":false}"}`, "x"},
			{"plain text", "summarize the news", "summarize the news"},
			{"plain text mentioning the flag", `please "run_in_background": true`, `please "run_in_background": true`},
			{"plain text with space", "  two\nlines  ", "  two\nlines  "},
			{"plain text with JSON after a word", `note {"input": broken`, `note {"input": broken`},
			{"plain text quoted JSON", `"{\"input\":\"x\"}"`, `"{\"input\":\"x\"}"`},
			{"plain text closing brace first", `}{"input":"x"}`, `}{"input":"x"}`},
			{"plain text array", `["a","b"]`, `["a","b"]`},
			{"empty plain text", "", ""},
			{"__arg1 plain text", `{"__arg1":"plain text"}`, "plain text"},
			{"__arg1 plain text with flag words", `{"__arg1":"run_in_background true"}`, "run_in_background true"},
			{"nested __arg1", `{"__arg1":"{\"__arg1\":\"{\\\"input\\\":\\\"x\\\"}\"}"}`, "x"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := newEnv(t)
				g := e.gate(out, nil)
				g.open()
				s := e.prepare("coord", map[string]any{
					"bg": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: g.run}),
					"fg": middleware.Child{Kind: work.KindAgent, Run: g.run},
				})
				for _, name := range []string{"bg", "fg"} {
					if got := call(t, tool(t, s, name), tc.input); got != out {
						t.Fatalf("%s: output %q, want %q", name, got, out)
					}
					if got := <-g.inputs; got != tc.childGets {
						t.Fatalf("%s: child got %q, want %q", name, got, tc.childGets)
					}
				}
				if l := e.list(s.Owner()); l != "[]" {
					t.Fatalf("a foreground call registered Work: %s", l)
				}
			})
		}
	}
}

// TestSchemaChildInput: a schema child gets its input object as compact JSON
// with sorted keys, without run_in_background, strings as written.
func TestSchemaChildInput(t *testing.T) {
	e := newEnv(t)
	g := e.gate("ok", nil)
	g.open()
	s := e.prepare("coord", map[string]any{
		"lookup": middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: g.run,
			Schema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"query": map[string]any{"type": "string"},
					"limit": map[string]any{"type": "integer"},
					"opts":  map[string]any{"type": "object"},
				},
				"required": []any{"query"},
			}}),
	})
	for _, tc := range []struct{ name, input, want string }{
		{"plain", `{"query":"cats"}`, `{"query":"cats"}`},
		{"sorted and compact", "{ \"query\" : \"cats\",\n \"limit\": 10 }", `{"limit":10,"query":"cats"}`},
		{"flag dropped", `{"run_in_background":false,"query":"cats"}`, `{"query":"cats"}`},
		{"html kept", `{"query":"<b>a & b</b>"}`, `{"query":"<b>a & b</b>"}`},
		{"unicode kept", `{"query":"日本語 🚀"}`, `{"query":"日本語 🚀"}`},
		{"number text kept", `{"query":"x","limit":1e2}`, `{"limit":1e2,"query":"x"}`},
		{"big integer kept", `{"query":"x","limit":123456789012345678901234567890}`, `{"limit":123456789012345678901234567890,"query":"x"}`},
		{"nested kept", `{"query":"x","opts":{"b":[1, 2],"a":null}}`, `{"opts":{"b":[1,2],"a":null},"query":"x"}`},
		{"undeclared field kept", `{"query":"x","extra":true}`, `{"extra":true,"query":"x"}`},
		{"__arg1", `{"__arg1":"{\"query\":\"cats\",\"run_in_background\":false}"}`, `{"query":"cats"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if out := call(t, tool(t, s, "lookup"), tc.input); out != "ok" {
				t.Fatalf("output %s", out)
			}
			if got := <-g.inputs; got != tc.want {
				t.Fatalf("child got %s, want %s", got, tc.want)
			}
		})
	}
}

// TestBackgroundReturnsAtOnce: the Ref comes back while the child is still
// blocked, in every accepted form; the result is then the exact output.
func TestBackgroundReturnsAtOnce(t *testing.T) {
	for _, tc := range []struct{ name, label, input, childGets string }{
		{"raw object", "research", `{"input":"x","run_in_background":true}`, "x"},
		{"flag first", "research", `{"run_in_background":true,"input":"x"}`, "x"},
		{"__arg1", "research", `{"__arg1":"{\"input\":\"x\",\"run_in_background\":true}"}`, "x"},
		{"schema child", "lookup", `{"query":"q","run_in_background":true}`, `{"query":"q"}`},
		{"schema child __arg1", "lookup", `{"__arg1":"{\"query\":\"q\",\"run_in_background\":true}"}`, `{"query":"q"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			const out = "résumé: {\"ok\":true}\n"
			g := e.gate(out, nil)
			s := e.prepare("coord", map[string]any{
				"research": middleware.Backgroundable(middleware.Child{ID: "researcher", Kind: work.KindAgent, Run: g.run}),
				"lookup": middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: g.run,
					Schema: map[string]any{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}}}),
			})
			ref := call(t, tool(t, s, tc.label), tc.input)
			id := refID(t, ref)
			targetID := map[string]string{"research": "researcher", "lookup": "lookup"}[tc.label]
			want := `{"kind":"work.ref","id":"` + id + `","targetId":"` + targetID + `","guarantees":{"execution":"process-local","rejoin":"process-local"}}`
			if ref != want {
				t.Fatalf("ref %s, want %s", ref, want)
			}
			<-g.started // the child is running and blocked: the Ref came first
			if got := <-g.inputs; got != tc.childGets {
				t.Fatalf("child got %q", got)
			}
			if st := act(t, s, map[string]string{"action": "status", "id": id}); !strings.Contains(st, `"state":"running"`) {
				t.Fatalf("status %s", st)
			}
			g.open()
			if got := act(t, s, map[string]string{"action": "result", "id": id}); got != out {
				t.Fatalf("result %q, want %q", got, out)
			}
		})
	}
}

// TestForegroundFailures: a failing, panicking or cancelled foreground child
// yields an error object with no failure text.
func TestForegroundFailures(t *testing.T) {
	e := newEnv(t)
	block := e.gate("", nil)
	block.cooperative = true
	s := e.prepare("coord", map[string]any{
		"fails":  middleware.Child{Kind: work.KindFunction, Run: func(context.Context, string) (string, error) { return "partial", errBoom }},
		"panics": middleware.Child{Kind: work.KindFunction, Run: func(context.Context, string) (string, error) { panic("kaboom") }},
		"blocks": middleware.Child{Kind: work.KindFunction, Run: block.run},
	})
	if got := call(t, tool(t, s, "fails"), "x"); got != `{"error":{"code":"child_failed","message":"child failed (class error)"}}` {
		t.Errorf("fails: %s", got)
	}
	if got := call(t, tool(t, s, "panics"), "x"); got != `{"error":{"code":"child_failed","message":"child failed (class panic)"}}` {
		t.Errorf("panics: %s", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-block.started
		cancel()
	}()
	if got := callCtx(t, ctx, tool(t, s, "blocks"), "x"); got != `{"error":{"code":"cancelled","message":"call cancelled"}}` {
		t.Errorf("cancelled: %s", got)
	}
}
