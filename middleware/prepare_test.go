package middleware_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

// plainTool is an ordinary, authored tool.
type plainTool struct{ name string }

func (p *plainTool) Name() string        { return p.name }
func (p *plainTool) Description() string { return "a plain tool" }
func (p *plainTool) Call(context.Context, string) (string, error) {
	return "plain:" + p.name, nil
}

func echo(_ context.Context, in string) (string, error) { return "echo:" + in, nil }

func names(s *middleware.Kit) []string {
	var out []string
	for _, tl := range s.Tools() {
		out = append(out, tl.Name())
	}
	return out
}

func TestPrepareAddsWorkOnceIffBackground(t *testing.T) {
	sup := work.New()
	defer sup.Close(context.Background())
	search := &plainTool{name: "search"}
	for _, tc := range []struct {
		name    string
		entries map[string]any
		want    []string
		hasWork bool
	}{
		{"nothing", map[string]any{}, nil, false},
		{"only tools", map[string]any{"search": search}, []string{"search"}, false},
		{"foreground child", map[string]any{"search": search, "sum": middleware.Child{Kind: work.KindFunction, Run: echo}},
			[]string{"search", "sum"}, false},
		{"one background", map[string]any{"search": search, "research": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: echo})},
			[]string{"research", "search", "work"}, true},
		{"three backgrounds", map[string]any{
			"c": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: echo}),
			"a": middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: echo}),
			"b": middleware.Child{Kind: work.KindAgent, Run: echo},
			"z": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: echo}),
		}, []string{"a", "b", "c", "z", "work"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := middleware.Prepare(sup, work.NewOwner("coord"), tc.entries)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(s); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("tools %v, want %v", got, tc.want)
			}
			if s.HasWork() != tc.hasWork {
				t.Fatalf("HasWork = %v", s.HasWork())
			}
			if s.Owner() != work.NewOwner("coord") {
				t.Fatalf("Owner = %v", s.Owner())
			}
			// Tools returns a copy.
			tools := s.Tools()
			if len(tools) > 0 {
				tools[0] = nil
				if s.Tools()[0] == nil {
					t.Fatal("Tools shares its slice")
				}
			}
		})
	}
}

func TestPrepareErrors(t *testing.T) {
	sup := work.New()
	defer sup.Close(context.Background())
	bg := middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: echo})
	reserved := map[string]any{"type": "object", "properties": map[string]any{"run_in_background": map[string]any{"type": "boolean"}}}
	for _, tc := range []struct {
		name    string
		sup     *work.Engine
		owner   work.Owner
		entries map[string]any
		extra   []string
		want    string
	}{
		{name: "authored work label", entries: map[string]any{"research": bg, "work": &plainTool{name: "work"}}, want: `named "work"`},
		{name: "authored Work label, any case", entries: map[string]any{"research": bg, "WORK": &plainTool{name: "WORK"}}, want: `named "WORK"`},
		{name: "authored work child", entries: map[string]any{"research": bg, "work": middleware.Child{Kind: work.KindAgent, Run: echo}}, want: `named "work"`},
		{name: "work from the prompt", entries: map[string]any{"research": bg}, extra: []string{"lookup", "work"}, want: `"work"`},
		{name: "Work from the prompt, any case", entries: map[string]any{"research": bg}, extra: []string{"Work"}, want: `"Work"`},
		{name: "tool named work under another label", entries: map[string]any{"research": bg, "jobs": &plainTool{name: "work"}}, want: "label and name must match"},
		{name: "name differs from label", entries: map[string]any{"search": &plainTool{name: "find"}}, want: "label and name must match"},
		{name: "background schema declares run_in_background", entries: map[string]any{
			"research": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: echo, Schema: reserved})}, want: "run_in_background"},
		{name: "foreground schema declares run_in_background", entries: map[string]any{
			"research": middleware.Child{Kind: work.KindAgent, Run: echo, Schema: reserved}}, want: "run_in_background"},
		{name: "schema not an object schema", entries: map[string]any{
			"research": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: echo, Schema: map[string]any{"type": "string"}})}, want: "object schema"},
		{name: "schema properties not an object", entries: map[string]any{
			"research": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: echo, Schema: map[string]any{"type": "object", "properties": "q"}})}, want: "properties"},
		{name: "schema required not a list of names", entries: map[string]any{
			"research": middleware.Child{Kind: work.KindAgent, Run: echo, Schema: map[string]any{"type": "object", "required": "q"}}}, want: "required"},
		{name: "schema not JSON-encodable", entries: map[string]any{
			"research": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: echo, Schema: map[string]any{"type": "object", "x": make(chan int)}})}, want: "JSON"},
		{name: "foreground schema not JSON-encodable", entries: map[string]any{
			"research": middleware.Child{Kind: work.KindAgent, Run: echo, Schema: map[string]any{"x": func() {}}}}, want: "JSON"},
		{name: "zero BackgroundChild", entries: map[string]any{"research": middleware.BackgroundChild{}}, want: "zero BackgroundChild"},
		{name: "child without Run", entries: map[string]any{"research": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent})}, want: "no Run"},
		{name: "child without kind", entries: map[string]any{"research": middleware.Child{Run: echo}}, want: "kind"},
		{name: "empty label", entries: map[string]any{"": &plainTool{name: ""}}, want: "empty"},
		{name: "unsupported entry", entries: map[string]any{"research": "a string"}, want: "unsupported"},
		{name: "nil entry", entries: map[string]any{"research": nil}, want: "research"},
		{name: "pointer to Child", entries: map[string]any{"research": &middleware.Child{Kind: work.KindAgent, Run: echo}}, want: "unsupported"},
		{name: "nil engine", sup: nil, entries: map[string]any{}, want: "nil engine"},
		{name: "zero owner", owner: work.Owner{}, entries: map[string]any{}, want: "Owner"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, owner := tc.sup, tc.owner
			if s == nil && tc.name != "nil engine" {
				s = sup
			}
			if owner.IsZero() && tc.name != "zero owner" {
				owner = work.NewOwner("coord")
			}
			set, err := middleware.Prepare(s, owner, tc.entries, tc.extra...)
			if err == nil {
				t.Fatalf("Prepare succeeded with tools %v", names(set))
			}
			if set != nil {
				t.Fatal("a failed Prepare returned a Kit")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

func TestPreparePassesToolsThrough(t *testing.T) {
	sup := work.New()
	defer sup.Close(context.Background())
	search, calc := &plainTool{name: "search"}, &plainTool{name: "calc"}
	s, err := middleware.Prepare(sup, work.NewOwner("coord"), map[string]any{
		"search":   search,
		"calc":     calc,
		"research": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: echo}),
	}, "search_docs")
	if err != nil {
		t.Fatal(err)
	}
	if tool(t, s, "search") != middleware.Tool(search) || tool(t, s, "calc") != middleware.Tool(calc) {
		t.Fatal("an ordinary tool was not passed through as the identical value")
	}
}

var reservedProperty = map[string]any{
	"type":        "boolean",
	"description": "Run in the background: returns a work.ref at once; use the work tool to follow it and read its result.",
}

func TestPreparedSchemas(t *testing.T) {
	sup := work.New()
	defer sup.Close(context.Background())
	original := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query": map[string]any{"type": "string"},
		},
		"required": []string{"query"},
	}
	snapshot := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query": map[string]any{"type": "string"},
		},
		"required": []string{"query"},
	}
	s, err := middleware.Prepare(sup, work.NewOwner("coord"), map[string]any{
		"lookup": middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: echo, Schema: original}),
		"fg":     middleware.Child{Kind: work.KindFunction, Run: echo, Schema: original},
		"text":   middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: echo}),
		"plain":  middleware.Child{Kind: work.KindAgent, Run: echo},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(original, snapshot) {
		t.Fatalf("Prepare mutated the caller's schema: %v", original)
	}
	schema := func(name string) map[string]any {
		sc, ok := tool(t, s, name).(middleware.Schemer)
		if !ok {
			t.Fatalf("%s is not a Schemer", name)
		}
		return sc.Schema()
	}
	wantLookup := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query":             map[string]any{"type": "string"},
			"run_in_background": reservedProperty,
		},
		"required": []any{"query"},
	}
	if got := schema("lookup"); !reflect.DeepEqual(got, wantLookup) {
		t.Errorf("lookup schema %v", got)
	}
	wantFg := map[string]any{
		"type":       "object",
		"properties": map[string]any{"query": map[string]any{"type": "string"}},
		"required":   []any{"query"},
	}
	if got := schema("fg"); !reflect.DeepEqual(got, wantFg) {
		t.Errorf("foreground schema %v", got)
	}
	wantText := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"input":             map[string]any{"type": "string", "description": "The task for the child."},
			"run_in_background": reservedProperty,
		},
		"required": []any{"input"},
	}
	if got := schema("text"); !reflect.DeepEqual(got, wantText) {
		t.Errorf("string child schema %v", got)
	}
	wantPlain := map[string]any{
		"type":       "object",
		"properties": map[string]any{"input": map[string]any{"type": "string", "description": "The task for the child."}},
		"required":   []any{"input"},
	}
	if got := schema("plain"); !reflect.DeepEqual(got, wantPlain) {
		t.Errorf("foreground string child schema %v", got)
	}
	// Schema returns a copy each time.
	got := schema("lookup")
	got["properties"].(map[string]any)["evil"] = true
	if again := schema("lookup"); !reflect.DeepEqual(again, wantLookup) {
		t.Errorf("Schema shares its map: %v", again)
	}
	// The work tool's schema is fixed for the run.
	w := schema("work")
	wantWork := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"action":  map[string]any{"type": "string", "enum": []any{"list", "status", "result", "cancel", "detach", "send"}, "description": "What to do."},
			"id":      map[string]any{"type": "string", "description": "The work id (from a work.ref or list)."},
			"timeout": map[string]any{"type": "string", "description": `For result: how long to wait, a duration like "10s" or "30 seconds" (a number of seconds like 10 is also accepted); capped at and defaulting to 30s.`},
			"message": map[string]any{"type": "string", "description": "For send: the guidance text."},
		},
		"required":             []any{"action"},
		"additionalProperties": false,
	}
	if !reflect.DeepEqual(w, wantWork) {
		t.Errorf("work schema %v", w)
	}
	w["required"] = nil
	if !reflect.DeepEqual(schema("work"), wantWork) {
		t.Error("the work schema changed")
	}
	d := tool(t, s, "work").Description()
	for _, want := range []string{"list:", "status:", "result:", "cancel:", "detach:", "send:", "Results come only through result"} {
		if !strings.Contains(d, want) {
			t.Errorf("work description lacks %q: %s", want, d)
		}
	}
	if d := tool(t, s, "text").Description(); !strings.Contains(d, `"run_in_background": true`) {
		t.Errorf("a backgroundable child's description does not explain the flag: %s", d)
	}
	if d := tool(t, s, "plain").Description(); strings.Contains(d, "run_in_background") {
		t.Errorf("a foreground child's description mentions the flag: %s", d)
	}
}

// TestPrepareCopies: Backgroundable and Prepare take copies; changes to the
// caller's Child or schema afterwards change nothing.
func TestPrepareCopies(t *testing.T) {
	e := newEnv(t)
	schema := map[string]any{
		"type":       "object",
		"properties": map[string]any{"query": map[string]any{"type": "string"}},
		"required":   []any{"query"},
	}
	child := middleware.Child{ID: "v1", Description: "Looks things up.", Kind: work.KindFunction, Run: echo, Schema: schema}
	bg := middleware.Backgroundable(child)
	fgSchema := map[string]any{
		"type":       "object",
		"properties": map[string]any{"query": map[string]any{"type": "string"}},
		"required":   []string{"query"}, // a []string: normalized by Prepare
	}
	fg := middleware.Child{Kind: work.KindFunction, Run: echo, Schema: fgSchema}

	// Change the caller's values before Prepare: the BackgroundChild is frozen.
	child.Description = "changed"
	child.Run = func(context.Context, string) (string, error) { return "changed", nil }
	child.ID = "changed"
	schema["required"] = []any{"other"}
	schema["properties"].(map[string]any)["query"].(map[string]any)["type"] = "integer"
	schema["properties"].(map[string]any)["run_in_background"] = map[string]any{"type": "boolean"}

	s := e.prepare("coord", map[string]any{"lookup": bg, "fg": fg})

	// And after Prepare: the Kit is frozen too.
	fgSchema["required"] = []string{"other"}
	fgSchema["properties"].(map[string]any)["query"] = map[string]any{"type": "integer"}

	if d := tool(t, s, "lookup").Description(); !strings.HasPrefix(d, "Looks things up.") {
		t.Errorf("description changed: %s", d)
	}
	if got := call(t, tool(t, s, "lookup"), `{"query":"cats"}`); got != `echo:{"query":"cats"}` {
		t.Errorf("foreground call: %s", got)
	}
	id := refID(t, call(t, tool(t, s, "lookup"), `{"query":"cats","run_in_background":true}`))
	if st := act(t, s, map[string]string{"action": "status", "id": id}); !strings.Contains(st, `"targetId":"v1"`) {
		t.Errorf("target id changed: %s", st)
	}
	if code := errorCode(t, call(t, tool(t, s, "lookup"), `{"other":"x"}`)); code != middleware.CodeChildInput {
		t.Errorf("required changed: %s", code)
	}
	// The foreground child's []string required list is enforced, and the
	// later change to the caller's map does not reach it.
	if code := errorCode(t, call(t, tool(t, s, "fg"), `{"other":"x"}`)); code != middleware.CodeChildInput {
		t.Errorf("foreground required not enforced: %s", code)
	}
	if got := call(t, tool(t, s, "fg"), `{"query":"cats"}`); got != `echo:{"query":"cats"}` {
		t.Errorf("foreground child saw the caller's later schema change: %s", got)
	}
}

// TestPrepareWorkNameWithoutBackground: the seed forbids only a collision
// with the automatic work tool, so an agent with no backgroundable child
// (no work tool) may have an ordinary tool, or a prompt tool, named work.
func TestPrepareWorkNameWithoutBackground(t *testing.T) {
	sup := work.New()
	defer sup.Close(context.Background())
	s, err := middleware.Prepare(sup, work.NewOwner("o"), map[string]any{"work": &plainTool{name: "work"}}, "work")
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if s.HasWork() || len(s.Tools()) != 1 || s.Tools()[0].Name() != "work" {
		t.Fatalf("tools = %v, HasWork = %v; want the authored work tool only", s.Tools(), s.HasWork())
	}
}

// A nil *work.Engine is refused.
func TestPrepareTypedNilEngine(t *testing.T) {
	var sup *work.Engine
	if _, err := middleware.Prepare(sup, work.NewOwner("o"), map[string]any{}); err == nil {
		t.Fatal("Prepare with a typed nil *work.Engine: no error")
	}
}
