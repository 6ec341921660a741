package adaptertest

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

func TestScript(t *testing.T) {
	boom := errors.New("boom")
	s := NewScript(
		Calls(Call{Name: "a", Arguments: "{}"}, Call{ID: "mine", Name: "b", Arguments: "x"}),
		Func(func(r Request) Step { return Text("saw " + r.Last().Text) }),
		Fail(boom),
		Func(func(Request) Step { return Func(nil) }),
	)
	ctx := context.Background()
	r, err := s.Reply(ctx, Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}})
	want := Reply{Calls: []Call{{ID: "call_1_1", Name: "a", Arguments: "{}"}, {ID: "mine", Name: "b", Arguments: "x"}}}
	if err != nil || !reflect.DeepEqual(r, want) {
		t.Fatalf("step 1 = %+v, %v; want %+v", r, err, want)
	}
	if r, err := s.Reply(ctx, Request{Messages: []Message{{Role: RoleTool, ToolCallID: "mine", Text: "ok"}}}); err != nil || r.Text != "saw ok" {
		t.Fatalf("step 2 = %+v, %v", r, err)
	}
	if _, err := s.Reply(ctx, Request{}); !errors.Is(err, boom) {
		t.Fatalf("step 3 = %v, want boom", err)
	}
	if _, err := s.Reply(ctx, Request{}); err == nil {
		t.Fatal("a Func returning a Func answered")
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Reply(done, Request{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("done ctx = %v", err)
	}
	if _, err := s.Reply(ctx, Request{}); !errors.Is(err, ErrExhausted) {
		t.Fatalf("past the script = %v, want ErrExhausted", err)
	}
	reqs := s.Requests()
	if len(reqs) != 6 || reqs[4].Index != 4 || s.Remaining() != 0 {
		t.Fatalf("recorded %d requests (every one, a done ctx's too), remaining %d", len(reqs), s.Remaining())
	}
	if got, ok := reqs[1].Result("mine"); !ok || got != "ok" {
		t.Fatalf("Result = %q, %v", got, ok)
	}
	reqs[0].Messages[0].Text = "changed"
	if s.Requests()[0].Messages[0].Text != "hi" {
		t.Fatal("Requests shares memory with the Script")
	}
}

// TestScriptUsageAppendHelpers: usage reaches the Reply (a Func step's
// outer usage when its reply has none), Append extends the script, the
// zero Step fails, and the request helpers read what they name.
func TestScriptUsageAppendHelpers(t *testing.T) {
	s := NewScript(Text("a").WithUsage(3, 4), Func(func(Request) Step { return Text("b") }).WithUsage(5, 6))
	ctx := context.Background()
	req := Request{Messages: []Message{{Role: RoleSystem, Text: "sys"}, {Role: RoleUser, Text: "first"}, {Role: RoleTool, Text: "tool-1"},
		{Role: RoleUser, Text: "last"}, {Role: RoleTool, Text: "tool-2"}}, Tools: []ToolDef{{Name: "work"}}}
	if r, err := s.Reply(ctx, req); err != nil || r.Usage == nil || *r.Usage != (Usage{3, 4}) {
		t.Fatalf("step 1 = %+v, %v; want usage 3/4", r, err)
	}
	if r, err := s.Reply(ctx, req); err != nil || r.Text != "b" || r.Usage == nil || *r.Usage != (Usage{5, 6}) {
		t.Fatalf("step 2 = %+v, %v; want b with the Func step's usage", r, err)
	}
	s.Append(Text("c"), Step{})
	if r, err := s.Reply(ctx, req); err != nil || r.Text != "c" || r.Usage != nil {
		t.Fatalf("the appended step = %+v, %v", r, err)
	}
	if _, err := s.Reply(ctx, req); err == nil {
		t.Fatal("the zero Step answered")
	}
	if !req.Declares("work") || req.Declares("other") || req.FirstUser() != "first" || req.LastUser() != "last" || req.LastToolResult() != "tool-2" {
		t.Fatalf("helpers: Declares %t, FirstUser %q, LastUser %q, LastToolResult %q", req.Declares("work"), req.FirstUser(), req.LastUser(), req.LastToolResult())
	}
}

func TestCases(t *testing.T) {
	names := Cases()
	if len(names) != 17 || names[0] != "WorkRef" || names[len(names)-1] != "BackgroundDefault" {
		t.Fatalf("Cases() = %v", names)
	}
}
