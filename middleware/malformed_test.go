package middleware_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

// deepJSON is an object whose value nests deeper than encoding/json
// allows (10000 levels).
var deepJSON = `{"input":"b","run_in_background":true,"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`

// malformedObjects start with '{' (after space) but are not exactly one
// JSON object. Each was once taken for plain text and ran in the
// foreground with the broken text as its input. They are fuzz seeds too.
var malformedObjects = []struct{ name, input string }{
	{"cut off after tru", `{"input":"b","run_in_background":tru`},
	{"cut off after the colon", `{"input":"b","run_in_background":`},
	{"cut off inside a string", `{"input":"b`},
	{"only a brace", `{`},
	{"leading space, cut off", " \n\t{\"input\":\"b\",\"run_in_background\":true"},
	{"trailing comma", `{"input":"b","run_in_background":true,}`},
	{"unquoted key", `{input:"b","run_in_background":true}`},
	{"single quotes", `{'input':'b','run_in_background':true}`},
	{"True", `{"input":"b","run_in_background":True}`},
	{"NaN", `{"input":"b","n":NaN}`},
	{"two objects", `{"input":"a"}{"input":"b","run_in_background":true}`},
	{"two objects on two lines", "{\"input\":\"a\"}\n{\"input\":\"b\",\"run_in_background\":true}"},
	{"nested deeper than the parser allows", deepJSON},
	{"trailing text", `{"input":"b","run_in_background":true} please`},
	{"trailing brace", `{"input":"b","run_in_background":true}}`},
	{"trailing comment", `{"input":"b","run_in_background":true} // in the background`},
	{"in __arg1, cut off", `{"__arg1":"{\"input\":\"b\",\"run_in_background\":tru"}`},
	{"in __arg1, trailing comma", `{"__arg1":"{\"input\":\"b\",\"run_in_background\":true,}"}`},
	{"in __arg1, two objects", `{"__arg1":" {\"input\":\"a\"}{\"input\":\"b\"}"}`},
}

// TestMalformedObjectInputRefused: a child's input that starts with '{'
// must be exactly one JSON object; anything else is refused with
// invalid_child_input, telling the model to send a JSON object (and, for a
// child that takes text, how to send text that starts with '{'), and
// nothing is started: no Work, no foreground run, no lifecycle event.
func TestMalformedObjectInputRefused(t *testing.T) {
	for _, tc := range malformedObjects {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			g := e.gate("the child ran", nil)
			g.open() // without the check the child runs and returns at once
			s := e.prepare("coord", map[string]any{
				"research": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: g.run}),
				"fg":       middleware.Child{Kind: work.KindAgent, Run: g.run},
				"lookup": middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: g.run,
					Schema: map[string]any{"type": "object", "properties": map[string]any{"input": map[string]any{"type": "string"}}}}),
			})
			for _, label := range []string{"research", "fg", "lookup"} {
				out := call(t, tool(t, s, label), tc.input)
				if code := errorCode(t, out); code != middleware.CodeChildInput {
					t.Fatalf("%s: code %q, want %q: %s", label, code, middleware.CodeChildInput, out)
				}
				msg := errorMessage(t, out)
				if !strings.Contains(msg, "must be exactly one JSON object") || !strings.Contains(msg, "send") {
					t.Errorf("%s: the message does not ask for a JSON object: %s", label, msg)
				}
				wrap := strings.Contains(msg, `wrap plain text that starts with "{" as {"input": "..."}`)
				if wrap != (label != "lookup") {
					t.Errorf("%s: wrap hint %v in %s", label, wrap, msg)
				}
				if len(out) > 512 {
					t.Errorf("%s: a %d-byte reply", label, len(out))
				}
				if again := call(t, tool(t, s, label), tc.input); again != out {
					t.Errorf("%s: unstable error: %s then %s", label, out, again)
				}
			}
			select {
			case in := <-g.inputs:
				t.Fatalf("a child ran on malformed input, with input %.80q", in)
			default:
			}
			if l := e.list(s.Owner()); l != "[]" {
				t.Fatalf("Work was registered: %s", l)
			}
			if ev := e.obs.Events(); len(ev) != 0 {
				t.Fatalf("lifecycle events on refusal: %+v", ev)
			}
			for _, c := range e.obs.Calls() {
				if c.End.Outcome != "invalid" || c.End.ErrorClass != middleware.CodeChildInput {
					t.Fatalf("call recorded as %+v", c)
				}
			}
		})
	}
}

// TestWorkToolMalformedObject: the work tool refuses the same inputs with
// its own code.
func TestWorkToolMalformedObject(t *testing.T) {
	e := newEnv(t)
	s := researchSet(e, e.gate("", nil))
	for _, tc := range malformedObjects {
		in := strings.ReplaceAll(tc.input, `"input"`, `"action"`)
		if got := errorCode(t, call(t, tool(t, s, middleware.WorkToolName), in)); got != middleware.CodeInvalidInput {
			t.Errorf("%s: code %q", tc.name, got)
		}
	}
}

// errorMessage returns the message of the error object out.
func errorMessage(t *testing.T, out string) string {
	t.Helper()
	var v struct {
		Error middleware.ErrorObject `json:"error"`
	}
	if err := jsonUnmarshal(out, &v); err != nil {
		t.Fatalf("not JSON: %s", out)
	}
	return v.Error.Message
}

// hugeInput is the input bound of the children that get huge fields.
const hugeInput = 64 << 20

// TestHugeFieldsGiveSmallReplies: an error message quotes at most
// 64 bytes of a field name or value the model sent, so a
// huge key or value gets a small reply. The fields are 1 MiB (the bound
// does not depend on the size); AGENTWORK_CHAOS=1 makes them 50 MB. The
// children take inputs up to hugeInput: what is tested is how a huge field
// is parsed and quoted, not the input bound (TestChildInputBound).
func TestHugeFieldsGiveSmallReplies(t *testing.T) {
	size := 1 << 20
	if os.Getenv("AGENTWORK_CHAOS") != "" {
		size = 50 << 20
	}
	// In inputs, {K} is a huge key, {V} a huge value, {R} a huge run of a
	// three-byte rune (a cut must fall on a rune boundary) and {9} a huge
	// run of digits; they are expanded one case at a time.
	big := map[string]string{"{K}": "k", "{V}": "v", "{R}": "日", "{9}": "9"}
	kq := `"` + strings.Repeat("k", 64) + `"…`
	rq := `"` + strings.Repeat("日", 64/3) + `"…`
	for _, tc := range []struct {
		name, tool, input string
		code              string // "" for a reply that is not an error
		quoted            string // what the message must quote
	}{
		{"string child, huge unknown key", "research", `{"input":"x","{K}":1}`, middleware.CodeChildInput, kq},
		{"string child launch, huge unknown key", "research", `{"input":"x","run_in_background":true,"{K}":1}`, middleware.CodeChildInput, kq},
		{"string child, huge multibyte key", "research", `{"input":"x","{R}":1}`, middleware.CodeChildInput, rq},
		{"string child, huge value of the wrong type", "research", `{"input":["{V}"]}`, middleware.CodeChildInput, ""},
		{"string child, huge flag value", "research", `{"input":"x","run_in_background":"{V}"}`, middleware.CodeChildInput, ""},
		{"string child, huge cut-off object", "research", `{"input":"{V}`, middleware.CodeChildInput, ""},
		{"string child, huge key cut off", "research", `{"{K}`, middleware.CodeChildInput, ""},
		{"schema child, huge unknown key", "lookup", `{"query":"x","{K}":1}`, middleware.CodeChildInput, kq},
		{"schema child, huge value of the wrong type", "lookup", `{"query":"x","limit":"{V}"}`, middleware.CodeChildInput, ""},
		{"validate echoing a huge input", "echoing", `{"input":"{V}"}`, middleware.CodeChildInput, ""},
		{"work, huge unknown key", "work", `{"action":"list","{K}":1}`, middleware.CodeInvalidInput, kq},
		{"work, huge key only", "work", `{"{K}":"list"}`, middleware.CodeInvalidInput, kq},
		{"work, huge action", "work", `{"action":"{V}"}`, middleware.CodeUnknownAction, ""},
		{"work, huge id", "work", `{"action":"status","id":"{V}"}`, "", ""},
		{"work, huge timeout string", "work", `{"action":"result","id":"{run}","timeout":"{V}"}`, middleware.CodeInvalidTimeout, ""},
		{"work, huge timeout number", "work", `{"action":"result","id":"{run}","timeout":{9}}`, middleware.CodeInvalidTimeout, ""},
		{"work, huge message to an unknown id", "work", `{"action":"send","id":"0123456789abcdef0123456789abcdef","message":"{V}"}`, "", ""},
		{"work, huge wrong-typed message", "work", `{"action":"send","id":"{run}","message":["{V}"]}`, middleware.CodeInvalidInput, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, s, ids := badEnv(t)
			if tc.tool == "echoing" {
				s = e.prepare("coord2", map[string]any{
					"echoing": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: e.gate("", nil).run, MaxInputBytes: hugeInput,
						Validate: func(in string) error { return fmt.Errorf("refused %q", in) }}),
				})
			}
			input := strings.ReplaceAll(tc.input, "{run}", ids["{run}"])
			for ph, unit := range big {
				input = strings.Replace(input, ph, strings.Repeat(unit, size/len(unit)), 1)
			}
			// A cancelled context: every case is refused before anything
			// runs, and a child that wrongly ran would return at once.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			out := callCtx(t, ctx, tool(t, s, tc.tool), input)
			if len(out) > 1024 {
				t.Fatalf("a %d-byte reply to a %d-byte input: %.200s", len(out), len(input), out)
			}
			t.Logf("a %d-byte reply to a %d-byte input", len(out), len(input))
			if tc.code != "" {
				if code := errorCode(t, out); code != tc.code {
					t.Fatalf("code %q, want %q: %s", code, tc.code, out)
				}
			}
			if tc.quoted != "" && !strings.Contains(errorMessage(t, out), tc.quoted) {
				t.Fatalf("the message does not quote %s: %s", tc.quoted, out)
			}
		})
	}
}

// TestValidateMessageClipped: a Validate error's text reaches the model
// cut to 256 bytes, at a rune boundary, marked with "…".
func TestValidateMessageClipped(t *testing.T) {
	e := newEnv(t)
	long := strings.Repeat("é", 200) // 400 bytes
	s := e.prepare("coord", map[string]any{
		"c": middleware.Child{Kind: work.KindAgent, Run: e.gate("", nil).run,
			Validate: func(in string) error {
				if in == "short" {
					return errors.New("too short")
				}
				return errors.New(long)
			}},
	})
	if got := errorMessage(t, call(t, tool(t, s, "c"), "short")); got != "too short" {
		t.Errorf("short message %q", got)
	}
	if got, want := errorMessage(t, call(t, tool(t, s, "c"), "x")), strings.Repeat("é", 128)+"…"; got != want {
		t.Errorf("long message %q, want %q", got, want)
	}
}
