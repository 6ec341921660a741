package middleware_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/enginetest"
)

// TestPrepareMisusedEngine: a nil, zero or closed engine fails Prepare with
// a stable error, never a panic (now or at the first call).
func TestPrepareMisusedEngine(t *testing.T) {
	closed := work.New()
	if err := closed.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	entries := func() map[string]any {
		return map[string]any{"job": middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: echo})}
	}
	var typedNil *work.Engine
	for _, tc := range []struct {
		name string
		sup  *work.Engine
		want []error // the error satisfies errors.Is for each
	}{
		{"nil", nil, []error{middleware.ErrNilEngine}},
		{"typed nil", typedNil, []error{middleware.ErrNilEngine}},
		{"zero Engine", &work.Engine{}, []error{middleware.ErrEngineNotReady, work.ErrNotInitialized}},
		{"closed", closed, []error{work.ErrClosed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var set *middleware.Kit
			var err error
			enginetest.NoHang(t, "Prepare", func() { set, err = middleware.Prepare(tc.sup, work.NewOwner("coord"), entries()) })
			if err == nil {
				// Every misused engine is refused. Should one be
				// accepted, its first call must still not panic.
				enginetest.NoHang(t, "the prepared tool's Call", func() { _, _ = set.Tools()[0].Call(context.Background(), "x") })
				t.Fatal("Prepare: no error")
			}
			for _, want := range tc.want {
				if !errors.Is(err, want) {
					t.Fatalf("Prepare: err = %v, want errors.Is %v", err, want)
				}
			}
			if tc.want[0] == middleware.ErrNilEngine && strings.Contains(err.Error(), "Supervisor") {
				t.Fatalf("Prepare: err = %q names a Supervisor; the argument is an engine", err)
			}
		})
	}
}

// TestNilContextEntries: every entry of the middleware that takes a
// context survives a nil one: the tools return the stable error object,
// the others behave as for an empty context.
func TestNilContextEntries(t *testing.T) {
	e := newEnv(t)
	g := e.gate("done", nil)
	s := e.prepare("coord", map[string]any{
		"job": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: g.run}),
		"fg":  middleware.Child{Kind: work.KindFunction, Run: echo},
	})
	launch(t, s, "job", "a")
	var nilCtx context.Context
	for _, tc := range []struct {
		name, tool, input string
	}{
		{"child launch", "job", `{"input":"x","run_in_background":true}`},
		{"foreground child", "fg", "x"},
		{"work list", middleware.WorkToolName, `{"action":"list"}`},
		{"work bad input", middleware.WorkToolName, `nope`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out string
			var err error
			tl := tool(t, s, tc.tool)
			enginetest.NoHang(t, "Call", func() { out, err = tl.Call(nilCtx, tc.input) })
			if err != nil {
				t.Fatalf("Call returned a Go error: %v", err)
			}
			if code := errorCode(t, out); code != middleware.CodeNilContext {
				t.Fatalf("code = %q, want %q", code, middleware.CodeNilContext)
			}
		})
	}
	t.Run("others", func(t *testing.T) {
		enginetest.NoHang(t, "StatusBlock", func() {
			if b := s.StatusBlock(nilCtx); !strings.Contains(b, "job") {
				t.Errorf("StatusBlock(nil) = %q, want the job's row", b)
			}
		})
		enginetest.NoHang(t, "Guidance", func() {
			if g := middleware.Guidance(nilCtx); g != "" {
				t.Errorf("Guidance(nil) = %q", g)
			}
		})
		enginetest.NoHang(t, "CallID", func() {
			if id := middleware.CallID(nilCtx); id != "" {
				t.Errorf("CallID(nil) = %q", id)
			}
		})
		enginetest.NoHang(t, "WithCallID", func() {
			if id := middleware.CallID(middleware.WithCallID(nilCtx, "c1")); id != "c1" {
				t.Errorf("CallID(WithCallID(nil, c1)) = %q", id)
			}
		})
	})
}

// TestPrepareErrorsAreSentinels: each preparation error satisfies
// errors.Is with its sentinel.
func TestPrepareErrorsAreSentinels(t *testing.T) {
	sup := work.New()
	defer sup.Close(context.Background())
	fn := middleware.Child{Kind: work.KindFunction, Run: echo}
	withSchema := func(schema map[string]any) middleware.Child { c := fn; c.Schema = schema; return c }
	withBudget := func(b work.Budget) middleware.Child { c := fn; c.Budget = b; return c }
	for _, tc := range []struct {
		name    string
		owner   work.Owner
		entries map[string]any
		extra   []string
		want    error
		names   string // the message must name it
	}{
		{"zero owner", work.Owner{}, map[string]any{}, nil, middleware.ErrZeroOwner, ""},
		{"empty label", work.NewOwner("o"), map[string]any{"": fn}, nil, middleware.ErrInvalidEntry, ""},
		{"nil tool", work.NewOwner("o"), map[string]any{"t": middleware.Tool(nil)}, nil, middleware.ErrInvalidEntry, "t"},
		{"unsupported type", work.NewOwner("o"), map[string]any{"t": 3}, nil, middleware.ErrInvalidEntry, "t"},
		{"name mismatch", work.NewOwner("o"), map[string]any{"t": &plainTool{name: "u"}}, nil, middleware.ErrInvalidEntry, "t"},
		{"zero BackgroundChild", work.NewOwner("o"), map[string]any{"t": middleware.BackgroundChild{}}, nil, middleware.ErrInvalidEntry, "t"},
		{"authored work", work.NewOwner("o"), map[string]any{"job": middleware.Backgroundable(fn), "Work": &plainTool{name: "Work"}}, nil, middleware.ErrWorkToolName, "Work"},
		{"extra work", work.NewOwner("o"), map[string]any{"job": middleware.Backgroundable(fn)}, []string{"WORK"}, middleware.ErrWorkToolName, "WORK"},
		{"no Run", work.NewOwner("o"), map[string]any{"c": middleware.Child{Kind: work.KindAgent}}, nil, middleware.ErrInvalidChild, "c"},
		{"bad kind", work.NewOwner("o"), map[string]any{"c": middleware.Child{Kind: 42, Run: echo}}, nil, middleware.ErrInvalidChild, "c"},
		{"schema not object", work.NewOwner("o"), map[string]any{"c": withSchema(map[string]any{"type": "string"})}, nil, middleware.ErrInvalidSchema, "c"},
		{"schema reserved", work.NewOwner("o"), map[string]any{"c": middleware.Backgroundable(withSchema(map[string]any{
			"type": "object", "properties": map[string]any{middleware.ReservedField: map[string]any{"type": "boolean"}}}))}, nil, middleware.ErrInvalidSchema, "c"},
		{"schema not encodable", work.NewOwner("o"), map[string]any{"c": middleware.Backgroundable(withSchema(map[string]any{"x": func() {}}))}, nil, middleware.ErrInvalidSchema, "c"},
		{"negative budget", work.NewOwner("o"), map[string]any{"c": withBudget(work.Budget{MaxTurns: -1})}, nil, middleware.ErrNegativeBudget, "c"},
		{"negative input limit", work.NewOwner("o"), map[string]any{"c": func() middleware.Child { c := fn; c.MaxInputBytes = -1; return c }()}, nil, middleware.ErrNegativeLimit, "c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := middleware.Prepare(sup, tc.owner, tc.entries, tc.extra...)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Prepare: err = %v, want errors.Is %v", err, tc.want)
			}
			if tc.want == middleware.ErrNegativeBudget && !errors.Is(err, work.ErrInvalidBudget) {
				t.Fatalf("Prepare: err = %v, want errors.Is work.ErrInvalidBudget too", err)
			}
			if tc.names != "" && !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.names)) {
				t.Fatalf("Prepare: err = %q does not name %q", err, tc.names)
			}
		})
	}
}

// TestPrepareChildNames: a child label providers refuse as a tool name
// fails Prepare, naming the child; an ordinary tool's name is the tool's
// business.
func TestPrepareChildNames(t *testing.T) {
	sup := work.New()
	defer sup.Close(context.Background())
	fn := middleware.Child{Kind: work.KindFunction, Run: echo}
	for _, tc := range []struct {
		name, label string
		ok          bool
	}{
		{"letters", "research", true},
		{"all classes", "Re_search-2", true},
		{"64 bytes", strings.Repeat("a", 64), true},
		{"65 bytes", strings.Repeat("a", 65), false},
		{"space", "deep research", false},
		{"dot", "research.v2", false},
		{"colon", "ns:research", false},
		{"non-ASCII", "recherché", false},
		{"slash", "a/b", false},
	} {
		for _, bg := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/background=%v", tc.name, bg), func(t *testing.T) {
				var entry any = fn
				if bg {
					entry = middleware.Backgroundable(fn)
				}
				_, err := middleware.Prepare(sup, work.NewOwner("o"), map[string]any{tc.label: entry})
				if tc.ok {
					if err != nil {
						t.Fatalf("Prepare: %v", err)
					}
					return
				}
				if !errors.Is(err, middleware.ErrInvalidChildName) || !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.label)) {
					t.Fatalf("Prepare: err = %v, want ErrInvalidChildName naming %q", err, tc.label)
				}
			})
		}
	}
	if _, err := middleware.Prepare(sup, work.NewOwner("o"), map[string]any{"a tool": &plainTool{name: "a tool"}}); err != nil {
		t.Fatalf("an ordinary tool named %q: %v", "a tool", err)
	}
}

// TestChildInputBound: a child input over its bound (1 MiB by default) is
// refused with input_too_large before anything starts, foreground and
// background alike.
func TestChildInputBound(t *testing.T) {
	var runs atomic.Int32
	run := func(_ context.Context, in string) (string, error) { runs.Add(1); return "ok", nil }
	big := strings.Repeat("x", middleware.DefaultMaxInputBytes+1)
	for _, tc := range []struct {
		name  string
		limit int
		input string
		want  string // "" accepted
	}{
		{"default, foreground over", 0, big, middleware.CodeInputTooLarge},
		{"default, background over", 0, `{"input":"` + big + `","run_in_background":true}`, middleware.CodeInputTooLarge},
		{"default, 8 MiB", 0, strings.Repeat("y", 8<<20), middleware.CodeInputTooLarge},
		{"default, foreground at the bound", 0, big[1:], ""},
		{"option, foreground over", 16, strings.Repeat("z", 17), middleware.CodeInputTooLarge},
		{"option, background over", 16, `{"input":"zz","run_in_background":true}`, middleware.CodeInputTooLarge},
		{"option, at the bound", 16, strings.Repeat("z", 16), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			runs.Store(0)
			c := middleware.Child{Kind: work.KindFunction, Run: run, MaxInputBytes: tc.limit}
			s := e.prepare("coord", map[string]any{"job": middleware.Backgroundable(c)})
			out := call(t, tool(t, s, "job"), tc.input)
			if tc.want == "" {
				if out != "ok" {
					t.Fatalf("out = %.80s, want ok", out)
				}
				return
			}
			if code := errorCode(t, out); code != tc.want {
				t.Fatalf("code = %q, want %q", code, tc.want)
			}
			if got := e.list(s.Owner()); got != "[]" || runs.Load() != 0 {
				t.Fatalf("after a refused input: list = %s, runs = %d; want nothing", got, runs.Load())
			}
			calls := e.obs.Calls()
			if len(calls) != 1 || calls[0].End.Outcome != "invalid" || calls[0].End.ErrorClass != middleware.CodeInputTooLarge {
				t.Fatalf("recorded calls = %+v, want one invalid %s", calls, middleware.CodeInputTooLarge)
			}
		})
	}
}

// TestSetAfterRelease: a released Kit starts nothing and lists nothing
// (released), and its id actions answer not_found, even when the owner is
// prepared again; Release is idempotent; the zero Kit's is an error.
func TestSetAfterRelease(t *testing.T) {
	e := newEnv(t)
	g := e.gate("done", nil)
	entries := map[string]any{
		"job": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: g.run}),
		"fg":  middleware.Child{Kind: work.KindFunction, Run: echo},
	}
	old := e.prepare("coord", entries)
	oldID := launch(t, old, "job", "a")
	if err := old.Release(); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := old.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	fresh := e.prepare("coord", entries)
	newID := launch(t, fresh, "job", "b")
	for _, id := range []string{oldID, newID} {
		for _, tc := range []struct {
			name  string
			input map[string]string
		}{
			{"status", map[string]string{"action": "status", "id": id}},
			{"result", map[string]string{"action": "result", "id": id, "timeout": "0s"}},
			{"cancel", map[string]string{"action": "cancel", "id": id}},
			{"detach", map[string]string{"action": "detach", "id": id}},
			{"send", map[string]string{"action": "send", "id": id, "message": "hi"}},
		} {
			t.Run(tc.name+"/"+map[bool]string{true: "old", false: "new"}[id == oldID], func(t *testing.T) {
				if out := act(t, old, tc.input); out != `{"status":"not_found"}` {
					t.Fatalf("out = %s, want not_found", out)
				}
			})
		}
	}
	for _, tc := range []struct {
		name, tool, input string
	}{
		{"launch", "job", `{"input":"x","run_in_background":true}`},
		{"foreground", "fg", "x"},
		{"list", middleware.WorkToolName, `{"action":"list"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code := errorCode(t, call(t, tool(t, old, tc.tool), tc.input)); code != middleware.CodeReleased {
				t.Fatalf("code = %q, want %q", code, middleware.CodeReleased)
			}
		})
	}
	if b := old.StatusBlock(context.Background()); b != "" {
		t.Fatalf("released Kit's status block = %q, want none", b)
	}
	// The fresh Kit's Work is untouched by the old Kit.
	if st, err := e.sup.Status(t.Context(), fresh.Owner(), newID); err != nil || st.State.Terminal() || st.State == work.StateCancelRequested {
		t.Fatalf("fresh Work: %+v, %v; want it live", st, err)
	}
	var zero middleware.Kit
	enginetest.NoHang(t, "zero Kit Release", func() {
		if err := zero.Release(); !errors.Is(err, middleware.ErrNotPrepared) {
			t.Errorf("zero Kit Release: %v, want ErrNotPrepared", err)
		}
	})
}

// TestWorkActionCounting: input refused for a known action is counted
// under that action; anything else under "invalid", so no model-written
// string becomes a label.
func TestWorkActionCounting(t *testing.T) {
	e := newEnv(t)
	g := e.gate("done", nil)
	s := e.prepare("coord", map[string]any{"job": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: g.run})})
	id := launch(t, s, "job", "a")
	for _, tc := range []struct {
		name, input, action, code string
	}{
		{"result without id", `{"action":"result"}`, "result", middleware.CodeMissingID},
		{"status without id", `{"action":"status"}`, "status", middleware.CodeMissingID},
		{"cancel without id", `{"action":"cancel"}`, "cancel", middleware.CodeMissingID},
		{"detach without id", `{"action":"detach"}`, "detach", middleware.CodeMissingID},
		{"send without message", `{"action":"send","id":"` + id + `"}`, "send", middleware.CodeMissingMessage},
		{"result bad timeout", `{"action":"result","id":"` + id + `","timeout":"soon"}`, "result", middleware.CodeInvalidTimeout},
		{"list id wrong type", `{"action":"list","id":3}`, "list", middleware.CodeInvalidInput},
		{"unknown action", `{"action":"resultz"}`, "invalid", middleware.CodeUnknownAction},
		{"missing action", `{"id":"x"}`, "invalid", middleware.CodeMissingAction},
		{"not JSON", `result`, "invalid", middleware.CodeInvalidInput},
		{"unknown field", `{"action":"list","x":1}`, "invalid", middleware.CodeInvalidInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(e.obs.Calls())
			out := call(t, tool(t, s, middleware.WorkToolName), tc.input)
			if code := errorCode(t, out); code != tc.code {
				t.Fatalf("code = %q, want %q", code, tc.code)
			}
			calls := e.obs.Calls()[before:]
			if len(calls) != 1 {
				t.Fatalf("recorded %d calls, want 1", len(calls))
			}
			c := calls[0]
			if c.Call.Action != tc.action || c.End.Outcome != "invalid" || c.End.ErrorClass != tc.code || c.Call.WorkID != "" {
				t.Fatalf("recorded %+v / %+v, want action %q, outcome invalid, class %q, no work id", c.Call, c.End, tc.action, tc.code)
			}
		})
	}
}

// ctxEngine is an in-process engine whose Subscribe honours ctx as a
// remote engine's does (the in-process one answers at once and ignores it).
type ctxEngine struct{ driver.Forwarder }

func (e ctxEngine) Subscribe(ctx context.Context, owner work.Owner, buffer int) (*work.Subscription, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return e.Engine.Subscribe(ctx, owner, buffer)
}

// TestPrepareContext: the probe runs under the caller's ctx (a cancelled
// one fails it with context.Canceled), a nil ctx is ErrNilContext, and
// Prepare is PrepareContext with context.Background().
func TestPrepareContext(t *testing.T) {
	eng := driver.NewEngine(ctxEngine{driver.Forwarder{Engine: work.New()}})
	entries := map[string]any{"job": middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: echo})}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := middleware.PrepareContext(ctx, eng, work.NewOwner("coord"), entries); !errors.Is(err, context.Canceled) {
		t.Fatalf("PrepareContext(cancelled): err = %v, want context.Canceled", err)
	}
	var nilCtx context.Context
	if _, err := middleware.PrepareContext(nilCtx, eng, work.NewOwner("coord"), entries); !errors.Is(err, middleware.ErrNilContext) {
		t.Fatalf("PrepareContext(nil): err = %v, want ErrNilContext", err)
	}
	set, err := middleware.Prepare(eng, work.NewOwner("coord"), entries)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if err := set.Release(); err != nil {
		t.Fatal(err)
	}
}

// TestCheckBudget: CheckBudget is work.Budget.Validate (same message),
// satisfying errors.Is for ErrNegativeBudget and work.ErrInvalidBudget.
func TestCheckBudget(t *testing.T) {
	if err := middleware.CheckBudget(work.Budget{MaxTurns: 1}); err != nil {
		t.Fatal(err)
	}
	b := work.Budget{MaxTokens: -3}
	err := middleware.CheckBudget(b)
	if !errors.Is(err, middleware.ErrNegativeBudget) || !errors.Is(err, work.ErrInvalidBudget) {
		t.Fatalf("err = %v, want ErrNegativeBudget and work.ErrInvalidBudget", err)
	}
	if !strings.Contains(err.Error(), b.Validate().Error()) {
		t.Fatalf("err = %q, want it to carry %q", err, b.Validate())
	}
}
