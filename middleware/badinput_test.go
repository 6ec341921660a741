package middleware_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// badInput is one bad call and the error code it must produce. In input,
// {fn} is replaced by the id of a running function Work, {done} by the id
// of a completed agent Work and {run} by the id of a running agent Work.
type badInput struct {
	name  string
	tool  string
	input string
	code  string
	opts  []work.Option // extra engine options
	close bool          // close the engine before the call
}

// badInputs is shared with the fuzz targets as seeds.
var badInputs = []badInput{
	// The work tool.
	{name: "work/not JSON", tool: "work", input: `list everything`, code: middleware.CodeInvalidInput},
	{name: "work/empty input", tool: "work", input: ``, code: middleware.CodeInvalidInput},
	{name: "work/JSON null", tool: "work", input: `null`, code: middleware.CodeInvalidInput},
	{name: "work/JSON string", tool: "work", input: `"list"`, code: middleware.CodeInvalidInput},
	{name: "work/JSON array", tool: "work", input: `[{"action":"list"}]`, code: middleware.CodeInvalidInput},
	{name: "work/truncated object", tool: "work", input: `{"action":"list"`, code: middleware.CodeInvalidInput},
	{name: "work/trailing text", tool: "work", input: `{"action":"list"} and more`, code: middleware.CodeInvalidInput},
	{name: "work/trailing brace", tool: "work", input: `{"action":"list"}}`, code: middleware.CodeInvalidInput},
	{name: "work/two objects", tool: "work", input: `{"action":"list"}{"action":"list"}`, code: middleware.CodeInvalidInput},
	{name: "work/empty object", tool: "work", input: `{}`, code: middleware.CodeMissingAction},
	{name: "work/missing action", tool: "work", input: `{"id":"{run}"}`, code: middleware.CodeMissingAction},
	{name: "work/empty action", tool: "work", input: `{"action":""}`, code: middleware.CodeMissingAction},
	{name: "work/action not string", tool: "work", input: `{"action":1}`, code: middleware.CodeInvalidInput},
	{name: "work/action array", tool: "work", input: `{"action":["list"]}`, code: middleware.CodeInvalidInput},
	{name: "work/action null", tool: "work", input: `{"action":null}`, code: middleware.CodeInvalidInput},
	{name: "work/unknown action", tool: "work", input: `{"action":"delete","id":"{run}"}`, code: middleware.CodeUnknownAction},
	{name: "work/action wrong case", tool: "work", input: `{"action":"LIST"}`, code: middleware.CodeUnknownAction},
	{name: "work/action padded", tool: "work", input: `{"action":" list"}`, code: middleware.CodeUnknownAction},
	{name: "work/status without id", tool: "work", input: `{"action":"status"}`, code: middleware.CodeMissingID},
	{name: "work/result without id", tool: "work", input: `{"action":"result","timeout":"1s"}`, code: middleware.CodeMissingID},
	{name: "work/cancel without id", tool: "work", input: `{"action":"cancel"}`, code: middleware.CodeMissingID},
	{name: "work/detach without id", tool: "work", input: `{"action":"detach"}`, code: middleware.CodeMissingID},
	{name: "work/send without id", tool: "work", input: `{"action":"send","message":"go on"}`, code: middleware.CodeMissingID},
	{name: "work/empty id", tool: "work", input: `{"action":"cancel","id":""}`, code: middleware.CodeMissingID},
	{name: "work/id not string", tool: "work", input: `{"action":"status","id":42}`, code: middleware.CodeInvalidInput},
	{name: "work/id object", tool: "work", input: `{"action":"status","id":{"id":"{run}"}}`, code: middleware.CodeInvalidInput},
	{name: "work/id null", tool: "work", input: `{"action":"cancel","id":null}`, code: middleware.CodeInvalidInput},
	{name: "work/timeout abc", tool: "work", input: `{"action":"result","id":"{run}","timeout":"abc"}`, code: middleware.CodeInvalidTimeout},
	{name: "work/timeout 10 parsecs", tool: "work", input: `{"action":"result","id":"{run}","timeout":"10 parsecs"}`, code: middleware.CodeInvalidTimeout},
	{name: "work/timeout negative", tool: "work", input: `{"action":"result","id":"{run}","timeout":"-5s"}`, code: middleware.CodeInvalidTimeout},
	{name: "work/timeout negative spelled", tool: "work", input: `{"action":"result","id":"{run}","timeout":"-5 seconds"}`, code: middleware.CodeInvalidTimeout},
	{name: "work/timeout empty", tool: "work", input: `{"action":"result","id":"{run}","timeout":""}`, code: middleware.CodeInvalidTimeout},
	{name: "work/timeout negative number", tool: "work", input: `{"action":"result","id":"{run}","timeout":-5}`, code: middleware.CodeInvalidTimeout},
	{name: "work/timeout negative fraction", tool: "work", input: `{"action":"result","id":"{run}","timeout":-0.5}`, code: middleware.CodeInvalidTimeout},
	{name: "work/timeout number out of float range", tool: "work", input: `{"action":"result","id":"{run}","timeout":1e400}`, code: middleware.CodeInvalidTimeout},
	{name: "work/timeout huge number", tool: "work", input: `{"action":"result","id":"{run}","timeout":1e10}`, code: middleware.CodeInvalidTimeout},
	{name: "work/timeout huge integer", tool: "work", input: `{"action":"result","id":"{run}","timeout":123456789012345678901234567890}`, code: middleware.CodeInvalidTimeout},
	{name: "work/timeout NaN string", tool: "work", input: `{"action":"result","id":"{run}","timeout":"NaN seconds"}`, code: middleware.CodeInvalidTimeout},
	{name: "work/timeout bare NaN", tool: "work", input: `{"action":"result","id":"{run}","timeout":NaN}`, code: middleware.CodeInvalidInput},
	{name: "work/timeout boolean", tool: "work", input: `{"action":"result","id":"{run}","timeout":true}`, code: middleware.CodeInvalidInput},
	{name: "work/timeout object", tool: "work", input: `{"action":"result","id":"{run}","timeout":{"s":5}}`, code: middleware.CodeInvalidInput},
	{name: "work/timeout number list", tool: "work", input: `{"action":"result","id":"{run}","timeout":[5]}`, code: middleware.CodeInvalidInput},
	{name: "work/timeout null", tool: "work", input: `{"action":"result","id":"{run}","timeout":null}`, code: middleware.CodeInvalidInput},
	{name: "work/send without message", tool: "work", input: `{"action":"send","id":"{run}"}`, code: middleware.CodeMissingMessage},
	{name: "work/send empty message", tool: "work", input: `{"action":"send","id":"{run}","message":""}`, code: middleware.CodeMissingMessage},
	{name: "work/send blank message", tool: "work", input: `{"action":"send","id":"{run}","message":" \n\t "}`, code: middleware.CodeMissingMessage},
	{name: "work/send blank message, unknown id", tool: "work", input: `{"action":"send","id":"0123456789abcdef0123456789abcdef","message":"  "}`, code: middleware.CodeMissingMessage},
	{name: "work/send blank message, malformed id", tool: "work", input: `{"action":"send","id":"nope","message":"\t"}`, code: middleware.CodeMissingMessage},
	{name: "work/send message not string", tool: "work", input: `{"action":"send","id":"{run}","message":42}`, code: middleware.CodeInvalidInput},
	{name: "work/send message null", tool: "work", input: `{"action":"send","id":"{run}","message":null}`, code: middleware.CodeInvalidInput},
	{name: "work/unknown field", tool: "work", input: `{"action":"list","verbose":true}`, code: middleware.CodeInvalidInput},
	{name: "work/unknown field and bad type", tool: "work", input: `{"action":1,"zzz":true}`, code: middleware.CodeInvalidInput},
	{name: "work/reserved-looking field", tool: "work", input: `{"__text":"list"}`, code: middleware.CodeInvalidInput},
	{name: "work/__arg1 plain text", tool: "work", input: `{"__arg1":"list all my work"}`, code: middleware.CodeInvalidInput},
	{name: "work/__arg1 not a string", tool: "work", input: `{"__arg1":{"action":"list"}}`, code: middleware.CodeInvalidInput},
	{name: "work/__arg1 null", tool: "work", input: `{"__arg1":null}`, code: middleware.CodeInvalidInput},
	{name: "work/__arg1 array", tool: "work", input: `{"__arg1":"[\"list\"]"}`, code: middleware.CodeInvalidInput},
	{name: "work/__arg1 missing action", tool: "work", input: `{"__arg1":"{\"id\":\"x\"}"}`, code: middleware.CodeMissingAction},
	{name: "work/send to function child", tool: "work", input: `{"action":"send","id":"{fn}","message":"go on"}`, code: work.ErrNotAgent.Code},
	{name: "work/send to terminal work", tool: "work", input: `{"action":"send","id":"{done}","message":"go on"}`, code: work.ErrTerminal.Code},

	// A child with an object schema ("lookup": query string, limit integer).
	{name: "schema child/plain text", tool: "lookup", input: `find cats`, code: middleware.CodeChildInput},
	{name: "schema child/__arg1 plain text", tool: "lookup", input: `{"__arg1":"find cats"}`, code: middleware.CodeChildInput},
	{name: "schema child/__arg1 number", tool: "lookup", input: `{"__arg1":7}`, code: middleware.CodeChildInput},
	{name: "schema child/JSON array", tool: "lookup", input: `[{"query":"cats"}]`, code: middleware.CodeChildInput},
	{name: "schema child/missing required", tool: "lookup", input: `{"limit":3}`, code: middleware.CodeChildInput},
	{name: "schema child/missing required, background", tool: "lookup", input: `{"limit":3,"run_in_background":true}`, code: middleware.CodeChildInput},
	{name: "schema child/wrong type string", tool: "lookup", input: `{"query":5}`, code: middleware.CodeChildInput},
	{name: "schema child/wrong type integer", tool: "lookup", input: `{"query":"cats","limit":"ten","run_in_background":true}`, code: middleware.CodeChildInput},
	{name: "schema child/fractional integer", tool: "lookup", input: `{"query":"cats","limit":1.5}`, code: middleware.CodeChildInput},
	{name: "schema child/unknown field (additionalProperties false)", tool: "lookup", input: `{"query":"cats","sort":"asc"}`, code: middleware.CodeChildInput},
	{name: "schema child/run_in_background yes", tool: "lookup", input: `{"query":"cats","run_in_background":"yes"}`, code: middleware.CodeChildInput},
	{name: "schema child/run_in_background 1", tool: "lookup", input: `{"query":"cats","run_in_background":1}`, code: middleware.CodeChildInput},
	{name: "schema child/run_in_background null", tool: "lookup", input: `{"query":"cats","run_in_background":null}`, code: middleware.CodeChildInput},
	{name: "schema child/run_in_background object", tool: "lookup", input: `{"query":"cats","run_in_background":{}}`, code: middleware.CodeChildInput},

	// A child that takes one string ("research").
	{name: "string child/unknown field", tool: "research", input: `{"input":"x","extra":1}`, code: middleware.CodeChildInput},
	{name: "string child/unknown field, background", tool: "research", input: `{"input":"x","extra":1,"run_in_background":true}`, code: middleware.CodeChildInput},
	{name: "string child/empty object", tool: "research", input: `{}`, code: middleware.CodeChildInput},
	{name: "string child/only the flag", tool: "research", input: `{"run_in_background":true}`, code: middleware.CodeChildInput},
	{name: "string child/input not string", tool: "research", input: `{"input":5,"run_in_background":true}`, code: middleware.CodeChildInput},
	{name: "string child/input null", tool: "research", input: `{"input":null}`, code: middleware.CodeChildInput},
	{name: "string child/run_in_background yes", tool: "research", input: `{"input":"x","run_in_background":"yes"}`, code: middleware.CodeChildInput},
	{name: "string child/run_in_background 1", tool: "research", input: `{"input":"x","run_in_background":1}`, code: middleware.CodeChildInput},
	{name: "string child/run_in_background null", tool: "research", input: `{"input":"x","run_in_background":null}`, code: middleware.CodeChildInput},
	{name: "string child/__arg1 not a string", tool: "research", input: `{"__arg1":true}`, code: middleware.CodeChildInput},
	{name: "string child/__arg1 wrapping a bad flag", tool: "research", input: `{"__arg1":"{\"input\":\"x\",\"run_in_background\":\"true\"}"}`, code: middleware.CodeChildInput},
	{name: "string child/sentinel-looking field", tool: "research", input: `{"__text":"x"}`, code: middleware.CodeChildInput},

	// Validate, foreground-only children and limits.
	{name: "validate rejects", tool: "checked", input: `{"input":"forbidden","run_in_background":true}`, code: middleware.CodeChildInput},
	{name: "validate rejects plain text", tool: "checked", input: `forbidden`, code: middleware.CodeChildInput},
	{name: "validate panics", tool: "checked", input: `{"input":"panic"}`, code: middleware.CodeChildInput},
	{name: "background flag on a foreground-only child", tool: "fg", input: `{"input":"x","run_in_background":true}`, code: middleware.CodeChildInput},
	{name: "background flag on a foreground-only child, __arg1", tool: "fg", input: `{"__arg1":"{\"input\":\"x\",\"run_in_background\":true}"}`, code: middleware.CodeChildInput},
	{name: "launch refused by the starts limit", tool: "research", input: `{"input":"x","run_in_background":true}`,
		code: work.ErrLimit.Code, opts: []work.Option{work.WithMaxStarts(3)}},
	{name: "launch refused by the outstanding limit", tool: "lookup", input: `{"query":"cats","run_in_background":true}`,
		code: work.ErrLimit.Code, opts: []work.Option{work.WithMaxOutstanding(2)}},
	{name: "launch refused by a closed engine", tool: "research", input: `{"input":"x","run_in_background":true}`,
		code: work.ErrClosed.Code, close: true},
}

// badEnv prepares owner "coord" with the children the table names and
// leaves three Works: a running function Work, a completed agent Work and a
// running agent Work.
func badEnv(t *testing.T, opts ...work.Option) (*env, *middleware.Kit, map[string]string) {
	e := newEnv(t, opts...)
	running := e.gate("", nil)
	running.cooperative = true
	done := e.gate("done", nil)
	done.open()
	// research and lookup take inputs up to hugeInput, so that
	// TestHugeFieldsGiveSmallReplies tests parsing, not the input bound.
	s := e.prepare("coord", map[string]any{
		"research": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: running.run, MaxInputBytes: hugeInput}),
		"finished": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: done.run}),
		"lookup": middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: running.run, MaxInputBytes: hugeInput,
			Schema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"query": map[string]any{"type": "string"},
					"limit": map[string]any{"type": "integer"},
				},
				"required":             []string{"query"},
				"additionalProperties": false,
			}}),
		"checked": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: running.run,
			Validate: func(in string) error {
				if in == "panic" {
					panic("validator exploded")
				}
				if strings.Contains(in, "forbidden") {
					return errors.New("that topic is not allowed")
				}
				return nil
			}}),
		"fg": middleware.Child{Kind: work.KindAgent, Run: running.run},
	})
	ids := map[string]string{"{done}": launch(t, s, "finished", "x")}
	e.obs.wait(ids["{done}"], observe.EventCompleted)
	ids["{fn}"] = refID(t, call(t, tool(t, s, "lookup"), `{"query":"q","run_in_background":true}`))
	ids["{run}"] = launch(t, s, "research", "x")
	return e, s, ids
}

func TestBadInputs(t *testing.T) {
	if len(badInputs) < 30 {
		t.Fatalf("only %d bad inputs", len(badInputs))
	}
	for _, tc := range badInputs {
		t.Run(tc.name, func(t *testing.T) {
			e, s, ids := badEnv(t, tc.opts...)
			if tc.close {
				if err := e.sup.Close(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			input := tc.input
			for ph, id := range ids {
				input = strings.ReplaceAll(input, ph, id)
			}
			before := e.list(s.Owner())
			events := len(e.obs.Events())
			out := call(t, tool(t, s, tc.tool), input)
			if code := errorCode(t, out); code != tc.code {
				t.Fatalf("code %q, want %q: %s", code, tc.code, out)
			}
			if after := e.list(s.Owner()); after != before {
				t.Fatalf("the registry changed:\nbefore %s\nafter  %s", before, after)
			}
			for _, ev := range e.obs.Events()[events:] {
				if ev.Type == observe.EventQueued || ev.Type == observe.EventGuidanceAccepted {
					t.Fatalf("a bad input was accepted: event %+v", ev)
				}
			}
			if strings.Contains(out, "validator exploded") {
				t.Fatalf("a panic value reached the model: %s", out)
			}
			// A repeat gives the same error object: codes and messages
			// are stable.
			if again := call(t, tool(t, s, tc.tool), input); again != out {
				t.Fatalf("unstable error: %s then %s", out, again)
			}
		})
	}
}
