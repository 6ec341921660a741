package adaptertest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/middleware"
)

// workRef: a background launch returns at once (its child still blocked)
// exactly {"kind":"work.ref","id":...,"targetId":...,"guarantees":...},
// targetId the child's own id or else its label, for an agent child and a
// function child; the child gets only its declared input.
func (s *suite) workRef(t *testing.T) {
	v := s.env(t)
	k := v.kid("research")
	agent := k.tool("research", true)
	agent.ID = "researcher-v1"
	g := v.gate()
	p := v.puppetOf("coord", agent, g.tool("fetch", true))
	out := p.results(Call{Name: "research", Arguments: argJSON(bg("TOPIC-1"))}, Call{Name: "fetch", Arguments: argJSON(bg("URL-1"))})
	aid := refID(t, out[0], "researcher-v1")
	fid := refID(t, out[1], "fetch")
	if aid == fid {
		t.Fatalf("two launches got one id %s", aid)
	}
	if req := k.await(); req.Last().Role != RoleUser || req.Last().Text != "TOPIC-1" {
		t.Errorf("the agent child's input message is %s %q, want user %q", req.Last().Role, req.Last().Text, "TOPIC-1")
	}
	if in := g.waitStarted(); in != "URL-1" {
		t.Errorf("the function child got %q, want %q", in, "URL-1")
	}
	k.reply(Text(exactOutput))
	g.open("page", nil)
	p.finish()
}

// workSchema is the work tool's input schema, descriptions left out.
var workSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"action":  map[string]any{"type": "string", "enum": []any{"list", "status", "result", "cancel", "detach", "send"}},
		"id":      map[string]any{"type": "string"},
		"timeout": map[string]any{"type": "string"},
		"message": map[string]any{"type": "string"},
	},
	"required":             []any{"action"},
	"additionalProperties": false,
}

// workToolOnce: the model is offered exactly one tool named work iff a
// child is backgroundable, with its fixed schema on every request; a
// backgroundable child's schema has run_in_background (a boolean), a
// foreground child's has not; an ordinary tool named work is allowed (and
// untouched) when no child is backgroundable.
func (s *suite) workToolOnce(t *testing.T) {
	fn := constChild("fn", false, "x")
	declared := constChild("typed", true, "x")
	declared.Schema = map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}, "required": []any{"n"}}
	for _, tc := range []struct {
		name     string
		tools    func(v *env) []Tool
		work     int // "work" tools wanted
		reserved []string
	}{
		{"ordinary tools only", func(*env) []Tool { return []Tool{plain("lookup", "x")} }, 0, nil},
		{"foreground children", func(v *env) []Tool {
			return []Tool{plain("lookup", "x"), fn, v.kid("fg").tool("summarize", false)}
		}, 0, nil},
		{"ordinary tool named work", func(*env) []Tool { return []Tool{plain("work", "mine"), fn} }, 1, nil},
		{"backgroundable children", func(v *env) []Tool {
			return []Tool{plain("lookup", "x"), fn, v.kid("bg").tool("research", true), constChild("fetch", true, "x"), declared}
		}, 1, []string{"research", "fetch", "typed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := s.env(t)
			ts := tc.tools(v)
			p := v.puppetOf("coord", ts...)
			p.call(ts[0].Name, `{"input":"x"}`) // a second request
			p.finish()
			for _, req := range p.script.Requests() {
				names := req.ToolNames()
				if n := countName(names, "work"); n != tc.work {
					t.Fatalf("request %d offers %d tools named work, want %d: %v", req.Index, n, tc.work, names)
				}
				for _, want := range ts {
					if countName(names, want.Name) != 1 {
						t.Errorf("request %d does not offer %s once: %v", req.Index, want.Name, names)
					}
				}
				for _, d := range req.Tools {
					schema := decodeSchema(t, d)
					switch {
					case d.Name == "work" && tc.reserved != nil:
						if got := stripDescriptions(schema); !reflect.DeepEqual(got, workSchema) {
							t.Errorf("the work tool's schema is %v, want %v", got, workSchema)
						}
					case d.Name == "work":
						if d.Description != "An ordinary tool (work)." {
							t.Errorf("the ordinary work tool was changed: %q", d.Description)
						}
					case d.Name == "lookup":
					default: // a child
						props, _ := schema["properties"].(map[string]any)
						rb, has := props[middleware.ReservedField].(map[string]any)
						if slices.Contains(tc.reserved, d.Name) != has || has && rb["type"] != "boolean" {
							t.Errorf("child %s's schema: %s", d.Name, d.Parameters)
						}
						if req, _ := schema["required"].([]any); slices.Contains(req, any(middleware.ReservedField)) {
							t.Errorf("child %s requires run_in_background", d.Name)
						}
						if d.Name == "typed" && props["n"] == nil {
							t.Errorf("the declared schema lost its field: %s", d.Parameters)
						}
					}
				}
			}
		})
	}
}

func countName(names []string, name string) int {
	n := 0
	for _, x := range names {
		if strings.EqualFold(x, name) {
			n++
		}
	}
	return n
}

func decodeSchema(t *testing.T, d ToolDef) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(d.Parameters, &m); err != nil {
		t.Fatalf("tool %s's parameters are not a JSON object: %s", d.Name, d.Parameters)
	}
	return m
}

func stripDescriptions(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k != "description" && k != "title" {
				out[k] = stripDescriptions(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = stripDescriptions(e)
		}
		return out
	}
	return v
}

// prepareErrors: an authored tool named work (in any case) beside a
// backgroundable child, and a child whose schema declares
// run_in_background, fail preparation before any model request, with
// middleware's sentinels.
func (s *suite) prepareErrors(t *testing.T) {
	reserved := map[string]any{"type": "object", "properties": map[string]any{"run_in_background": map[string]any{"type": "boolean"}}}
	for _, tc := range []struct {
		name  string
		tools []Tool
		want  error
	}{
		{"authored work", []Tool{plain("work", "x"), constChild("fetch", true, "x")}, middleware.ErrWorkToolName},
		{"authored Work", []Tool{constChild("fetch", true, "x"), plain("Work", "x")}, middleware.ErrWorkToolName},
		{"background child declares run_in_background", []Tool{withSchema(constChild("fetch", true, "x"), reserved)}, middleware.ErrInvalidSchema},
		{"foreground child declares run_in_background", []Tool{withSchema(constChild("fetch", false, "x"), reserved)}, middleware.ErrInvalidSchema},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := s.env(t)
			script := NewScript(Text("MUST-NOT-RUN"))
			c, err := s.a.NewCoordinator(t, v.cfg("coord", script, tc.tools...))
			if err == nil {
				if c == nil {
					t.Fatal("NewCoordinator returned neither a Coordinator nor an error")
				}
				_, err = c.Run(context.Background(), "task")
				_ = c.Release()
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("preparation error = %v, want one wrapping %v", err, tc.want)
			}
			if n := len(script.Requests()); n != 0 {
				t.Errorf("the model was asked %d times before the preparation error", n)
			}
		})
	}
}

func withSchema(tl Tool, schema map[string]any) Tool {
	tl.Schema = schema
	return tl
}

// foreground: a call without run_in_background, or with it false, returns
// the child's exact output (agent and function children); a failing
// foreground child gives one error object without its failure text; no
// Work stays visible.
func (s *suite) foreground(t *testing.T) {
	v := s.env(t)
	summarize, research := v.kid("summarize"), v.kid("research")
	tricky := "{\"kind\":\"work.ref\",\"id\":\"x\"}\n\tüñí  "
	failing := Tool{Kind: Function, Name: "failing", Description: "Fails.",
		Func: func(context.Context, string) (string, error) { return "", errors.New(failureText) }}
	p := v.puppetOf("coord", summarize.tool("summarize", false), research.tool("research", true),
		constChild("format", false, tricky), failing)

	ids := p.send(Call{Name: "summarize", Arguments: `{"input":"TOPIC-A"}`})
	if got := summarize.await().Last().Text; got != "TOPIC-A" {
		t.Errorf("the foreground child got %q", got)
	}
	summarize.reply(Text(exactOutput))
	if got := p.collect(ids...)[0]; got != exactOutput {
		t.Errorf("foreground agent child = %q, want %q", got, exactOutput)
	}
	ids = p.send(Call{Name: "research", Arguments: `{"input":"TOPIC-B","run_in_background":false}`})
	research.await()
	research.reply(Text(exactOutput + "B"))
	if got := p.collect(ids...)[0]; got != exactOutput+"B" {
		t.Errorf("run_in_background false = %q, want %q", got, exactOutput+"B")
	}
	if got := p.call("format", `{"input":"x"}`); got != tricky {
		t.Errorf("foreground function child = %q, want %q", got, tricky)
	}
	got := p.call("failing", `{"input":"x"}`)
	if errCode(got) == "" || strings.Contains(got, failureText) {
		t.Errorf("a failing foreground child = %s, want one error object without the failure text", got)
	}
	if got := p.work("action", "list"); got != "[]" {
		t.Errorf("list after foreground calls = %s", got)
	}
	p.finish()
}
