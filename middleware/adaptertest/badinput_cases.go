package adaptertest

import (
	"strings"
	"testing"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work/observe"
)

// badInputs are model inputs each answered by one error object with code.
var badInputs = []struct {
	name, tool, input, code string
}{
	{"work not JSON", "work", "list please", middleware.CodeInvalidInput},
	{"work cut-off JSON", "work", `{"action":"list"`, middleware.CodeInvalidInput},
	{"work an array", "work", `["list"]`, middleware.CodeInvalidInput},
	{"work no action", "work", `{}`, middleware.CodeMissingAction},
	{"work unknown action", "work", `{"action":"explode"}`, middleware.CodeUnknownAction},
	{"work no id", "work", `{"action":"status"}`, middleware.CodeMissingID},
	{"work id not a string", "work", `{"action":"status","id":7}`, middleware.CodeInvalidInput},
	{"work bad timeout", "work", `{"action":"result","id":"{run}","timeout":"soon"}`, middleware.CodeInvalidTimeout},
	{"work negative timeout", "work", `{"action":"result","id":"{run}","timeout":-1}`, middleware.CodeInvalidTimeout},
	{"work empty message", "work", `{"action":"send","id":"{run}","message":" "}`, middleware.CodeMissingMessage},
	{"work no message", "work", `{"action":"send","id":"{run}"}`, middleware.CodeMissingMessage},
	{"work unknown field", "work", `{"action":"list","verbose":true}`, middleware.CodeInvalidInput},
	{"child flag not a boolean", "research", `{"input":"x","run_in_background":"yes"}`, middleware.CodeChildInput},
	{"child input not a string", "research", `{"input":3,"run_in_background":true}`, middleware.CodeChildInput},
	{"child unknown field", "research", `{"input":"x","extra":1,"run_in_background":true}`, middleware.CodeChildInput},
	{"child only the flag", "research", `{"run_in_background":true}`, middleware.CodeChildInput},
	{"child cut-off JSON", "research", `{"input":"x","run_in_background":true`, middleware.CodeChildInput},
	{"typed child missing field", "typed", `{"run_in_background":true}`, middleware.CodeChildInput},
	{"typed child wrong type", "typed", `{"n":"one","run_in_background":true}`, middleware.CodeChildInput},
	{"typed child not an object", "typed", `hello`, middleware.CodeChildInput},
	{"foreground-only child launched", "fg", `{"input":"x","run_in_background":true}`, middleware.CodeChildInput},
}

// badInput: each bad input gets exactly one error object
// {"error":{"code":...,"message":...}} with its stable code, the same
// again when repeated; nothing is started or steered, and the run goes on
// to its final answer.
func (s *suite) badInput(t *testing.T) {
	v := s.env(t)
	k := v.kid("research")
	typed := constChild("typed", true, "x")
	typed.Schema = map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}},
		"required": []any{"n"}, "additionalProperties": false}
	p := v.puppetOf("coord", k.tool("research", true), typed, constChild("fg", false, "x"))
	run := refID(t, p.call("research", bg("x")), "research")
	k.await()
	before := p.work("action", "list")
	events := len(v.obs.Events())
	for _, tc := range badInputs {
		in := strings.ReplaceAll(tc.input, "{run}", run)
		out := p.results(Call{Name: tc.tool, Arguments: in}, Call{Name: tc.tool, Arguments: in})
		if code := errCode(out[0]); code != tc.code {
			t.Errorf("%s: %s(%s) = %s, want one error object with code %s", tc.name, tc.tool, in, out[0], tc.code)
		}
		if out[1] != out[0] {
			t.Errorf("%s: unstable error: %s then %s", tc.name, out[0], out[1])
		}
	}
	if after := p.work("action", "list"); after != before {
		t.Errorf("bad inputs changed the owner's Work:\nbefore %s\nafter  %s", before, after)
	}
	for _, e := range v.obs.Events()[events:] {
		if e.Type == observe.EventQueued || e.Type == observe.EventGuidanceAccepted {
			t.Errorf("a bad input was accepted: %+v", e)
		}
	}
	p.finish()
}
