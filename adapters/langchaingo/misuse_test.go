package langchaingo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// misNoPanic runs fn and fails the test when it panics.
func misNoPanic(t *testing.T, what string, fn func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%s panicked: %v", what, r)
		}
	}()
	fn()
}

// misFuncTool is a plain langchaingo tool that returns "".
type misFuncTool struct{ name string }

func (f misFuncTool) Name() string                                 { return f.name }
func (f misFuncTool) Description() string                          { return "A plain tool." }
func (f misFuncTool) Call(context.Context, string) (string, error) { return "", nil }

// misSup is an in-process engine closed when the test ends.
func misSup(t *testing.T, opts ...work.Option) *work.Engine {
	t.Helper()
	sup := work.New(opts...)
	t.Cleanup(func() {
		if err := sup.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return sup
}

// misTool returns the Kit's tool named name.
func misTool(t *testing.T, kit *lc.Kit, name string) tools.Tool {
	t.Helper()
	for _, tl := range kit.Tools() {
		if tl.Name() == name {
			return tl
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

// misCall calls tl and fails on a Go error: no prepared tool returns one.
func misCall(t *testing.T, tl tools.Tool, input string) string {
	t.Helper()
	out, err := tl.Call(context.Background(), input)
	if err != nil {
		t.Fatalf("%s.Call returned a Go error: %v", tl.Name(), err)
	}
	return out
}

// misCode returns the code of the error object out, or "" when out is not
// one.
func misCode(out string) string {
	var v struct {
		Error *middleware.ErrorObject `json:"error"`
	}
	if json.Unmarshal([]byte(out), &v) != nil || v.Error == nil || v.Error.Message == "" {
		return ""
	}
	return v.Error.Code
}

var misRefRE = regexp.MustCompile(`^\{"kind":"work\.ref","id":"([0-9a-f]{32})"`)

func misLaunch(t *testing.T, kit *lc.Kit, name string) string {
	t.Helper()
	out := misCall(t, misTool(t, kit, name), `{"input":"go","run_in_background":true}`)
	m := misRefRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("launch returned %s, want a work.ref", out)
	}
	return m[1]
}

// misBlocked is a function child that runs until its context ends.
func misBlocked(name string) *lc.Child {
	return lc.NewFunction(name, "Waits.", func(ctx context.Context, _ string) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
}

func misEcho(name string, opts ...lc.ChildOption) *lc.Child {
	return lc.NewFunction(name, "Echoes.", func(_ context.Context, in string) (string, error) { return "echo:" + in, nil }, opts...)
}

// TestPrepareMisuse: a nil context, a nil, zero or closed engine, a child
// name providers refuse and a negative budget fail Prepare with stable
// errors, never a panic.
func TestPrepareMisuse(t *testing.T) {
	closed := work.New()
	if err := closed.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	sup := misSup(t)
	var nilCtx context.Context
	for _, tc := range []struct {
		name string
		ctx  context.Context
		sup  *work.Engine
		ts   []tools.Tool
		opts []lc.Option
		want error  // nil: any error
		says string // the message must contain it
	}{
		{"nil ctx", nilCtx, sup, nil, nil, lc.ErrNilContext, ""},
		{"nil ctx with a child", nilCtx, sup, []tools.Tool{lc.Backgroundable(misEcho("job"))}, nil, lc.ErrNilContext, ""},
		{"nil engine", context.Background(), nil, nil, nil, middleware.ErrNilEngine, "engine"},
		{"zero Engine", context.Background(), &work.Engine{}, []tools.Tool{lc.Backgroundable(misEcho("job"))}, nil, middleware.ErrEngineNotReady, ""},
		{"zero Engine, no child", context.Background(), &work.Engine{}, nil, nil, work.ErrNotInitialized, ""},
		{"closed engine", context.Background(), closed, []tools.Tool{lc.Backgroundable(misEcho("job"))}, nil, work.ErrClosed, ""},
		{"closed engine, no child", context.Background(), closed, nil, nil, work.ErrClosed, ""},
		{"child name with a space", context.Background(), sup, []tools.Tool{misEcho("deep research")}, nil, lc.ErrInvalidChildName, `"deep research"`},
		{"background child name with a dot", context.Background(), sup, []tools.Tool{lc.Backgroundable(misEcho("research.v2"))}, nil, lc.ErrInvalidChildName, `"research.v2"`},
		{"child name of 65 bytes", context.Background(), sup, []tools.Tool{misEcho(strings.Repeat("r", 65))}, nil, lc.ErrInvalidChildName, strings.Repeat("r", 65)},
		{"FromTool of a tool with a bad name", context.Background(), sup, []tools.Tool{lc.Backgroundable(lc.FromTool(misFuncTool{name: "web search"}))}, nil, lc.ErrInvalidChildName, `"web search"`},
		{"nil tool", context.Background(), sup, []tools.Tool{nil}, nil, lc.ErrInvalidTool, ""},
		{"case twins", context.Background(), sup, []tools.Tool{misEcho("a"), misEcho("A")}, nil, lc.ErrInvalidTool, ""},
		{"FromTool nil", context.Background(), sup, []tools.Tool{lc.FromTool(nil)}, nil, lc.ErrInvalidChild, ""},
		{"FromExecutor nil", context.Background(), sup, []tools.Tool{lc.FromExecutor("x", "d", nil)}, nil, lc.ErrInvalidChild, `"x"`},
		{"Backgroundable nil", context.Background(), sup, []tools.Tool{lc.Backgroundable(nil)}, nil, lc.ErrInvalidChild, ""},
		{"schema error", context.Background(), sup, []tools.Tool{misEcho("s", lc.WithSchema(map[string]any{"type": "string"}))}, nil, middleware.ErrInvalidSchema, `"s"`},
		{"negative input bound", context.Background(), sup, []tools.Tool{misEcho("s", lc.WithMaxInputBytes(-1))}, nil, middleware.ErrNegativeLimit, `"s"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			var kit *lc.Kit
			misNoPanic(t, "Prepare", func() { kit, err = lc.Prepare(tc.ctx, tc.sup, scripted.New(), tc.ts, tc.opts...) })
			if err == nil {
				// Every case is refused. Should one be accepted, its
				// first call must still not panic: show that too.
				misNoPanic(t, "the first call", func() {
					if ts := kit.Tools(); len(ts) > 0 {
						_, _ = ts[0].Call(context.Background(), `{"input":"x","run_in_background":true}`)
					}
				})
				t.Fatal("Prepare: no error")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("Prepare: err = %v, want errors.Is %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("Prepare: err = %q, want it to contain %q", err, tc.says)
			}
		})
	}
	t.Run("tool call with a nil ctx", func(t *testing.T) {
		kit, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{lc.Backgroundable(misEcho("job")), misEcho("fg")})
		if err != nil {
			t.Fatal(err)
		}
		defer kit.Release()
		for _, tl := range kit.Tools() {
			var out string
			var err error
			misNoPanic(t, tl.Name()+".Call", func() { out, err = tl.Call(nilCtx, `{"input":"x"}`) })
			if err != nil || misCode(out) != middleware.CodeNilContext {
				t.Fatalf("%s.Call(nil ctx) = %q, %v; want code %q", tl.Name(), out, err, middleware.CodeNilContext)
			}
		}
	})
	t.Run("Retrofit nil ctx", func(t *testing.T) {
		var err error
		misNoPanic(t, "Retrofit", func() {
			_, _, err = lc.Retrofit(nilCtx, sup, agents.NewOpenAIFunctionsAgent(scripted.New(), []tools.Tool{misEcho("job")}))
		})
		if !errors.Is(err, lc.ErrNilContext) {
			t.Fatalf("Retrofit: err = %v, want ErrNilContext", err)
		}
	})
}

// TestNegativeBudgets: a negative field of WithBudget or WithPool fails
// Prepare with ErrNegativeBudget; zero and positive fields are fine.
func TestNegativeBudgets(t *testing.T) {
	sup := misSup(t)
	for _, tc := range []struct {
		name string
		b    work.Budget
		ok   bool
	}{
		{"zero", work.Budget{}, true},
		{"positive", work.Budget{MaxTurns: 3, MaxToolCalls: 4, MaxTokens: 1000, MaxDuration: 1e9}, true},
		{"turns", work.Budget{MaxTurns: -1}, false},
		{"tool calls", work.Budget{MaxToolCalls: -2}, false},
		{"tokens", work.Budget{MaxTokens: -3}, false},
		{"duration", work.Budget{MaxDuration: -1}, false},
	} {
		for _, where := range []string{"WithBudget", "WithPool"} {
			t.Run(tc.name+"/"+where, func(t *testing.T) {
				child := misEcho("job")
				var opts []lc.Option
				if where == "WithBudget" {
					child = misEcho("job", lc.WithBudget(tc.b))
				} else {
					opts = append(opts, lc.WithPool(tc.b))
				}
				kit, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{lc.Backgroundable(child)}, opts...)
				if tc.ok {
					if err != nil {
						t.Fatalf("Prepare: %v", err)
					}
					if err := kit.Release(); err != nil {
						t.Fatal(err)
					}
					return
				}
				if !errors.Is(err, lc.ErrNegativeBudget) || !errors.Is(err, work.ErrInvalidBudget) {
					t.Fatalf("Prepare: err = %v, want ErrNegativeBudget and work.ErrInvalidBudget", err)
				}
			})
		}
	}
}

// TestChildInputBoundAdapter: the adapter's children refuse inputs over
// their bound (1 MiB by default, WithMaxInputBytes) with input_too_large
// before any Work is accepted.
func TestChildInputBoundAdapter(t *testing.T) {
	var runs atomic.Int32
	body := func(_ context.Context, in string) (string, error) { runs.Add(1); return "ok", nil }
	eight := strings.Repeat("x", 8<<20)
	for _, tc := range []struct {
		name  string
		opts  []lc.ChildOption
		input string
		want  string // "" accepted
	}{
		{"8 MiB foreground", nil, eight, middleware.CodeInputTooLarge},
		{"8 MiB background", nil, `{"input":"` + eight + `","run_in_background":true}`, middleware.CodeInputTooLarge},
		{"1 MiB + 1 foreground", nil, strings.Repeat("x", 1<<20+1), middleware.CodeInputTooLarge},
		{"1 MiB foreground", nil, strings.Repeat("x", 1<<20), ""},
		{"option, over", []lc.ChildOption{lc.WithMaxInputBytes(8)}, `{"input":"123456789"}`, middleware.CodeInputTooLarge},
		{"option, background over", []lc.ChildOption{lc.WithMaxInputBytes(8)}, `{"input":"1","run_in_background":true}`, middleware.CodeInputTooLarge},
		{"option, within", []lc.ChildOption{lc.WithMaxInputBytes(8)}, "12345678", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs.Store(0)
			sup := misSup(t)
			child := lc.NewFunction("job", "d", body, tc.opts...)
			kit, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{lc.Backgroundable(child)})
			if err != nil {
				t.Fatal(err)
			}
			defer kit.Release()
			out := misCall(t, misTool(t, kit, "job"), tc.input)
			if tc.want == "" {
				if out != "ok" {
					t.Fatalf("out = %.80q, want ok", out)
				}
				return
			}
			if code := misCode(out); code != tc.want {
				t.Fatalf("out = %.200s, want code %q", out, tc.want)
			}
			if l, err := sup.List(t.Context(), kit.Owner()); err != nil || len(l) != 0 || runs.Load() != 0 {
				t.Fatalf("after a refused input: list = %v (%v), runs = %d; want nothing", l, err, runs.Load())
			}
		})
	}
}

// TestKitAfterRelease: a released Kit launches nothing and lists nothing
// (released); its id actions answer not_found; Release twice is fine; the
// zero Kit's Release and the zero Child's Call are stable errors.
func TestKitAfterRelease(t *testing.T) {
	sup := misSup(t)
	ts := []tools.Tool{lc.Backgroundable(misBlocked("job")), misEcho("fg")}
	kit, err := lc.Prepare(context.Background(), sup, scripted.New(), ts, lc.WithOwner("coord"))
	if err != nil {
		t.Fatal(err)
	}
	id := misLaunch(t, kit, "job")
	if err := kit.Release(); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := kit.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	for _, tc := range []struct {
		name, tool, input, want string
	}{
		{"launch", "job", `{"input":"x","run_in_background":true}`, "released"},
		{"foreground", "fg", "x", "released"},
		{"list", "work", `{"action":"list"}`, "released"},
		{"status", "work", `{"action":"status","id":"` + id + `"}`, ""},
		{"result", "work", `{"action":"result","id":"` + id + `","timeout":"0s"}`, ""},
		{"cancel", "work", `{"action":"cancel","id":"` + id + `"}`, ""},
		{"detach", "work", `{"action":"detach","id":"` + id + `"}`, ""},
		{"send", "work", `{"action":"send","id":"` + id + `","message":"hi"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := misCall(t, misTool(t, kit, tc.tool), tc.input)
			if tc.want == "" {
				if out != `{"status":"not_found"}` {
					t.Fatalf("out = %s, want not_found", out)
				}
				return
			}
			if code := misCode(out); code != tc.want {
				t.Fatalf("out = %s, want code %q", out, tc.want)
			}
		})
	}
	t.Run("zero values", func(t *testing.T) {
		var zk lc.Kit
		misNoPanic(t, "zero Kit Release", func() {
			if err := zk.Release(); !errors.Is(err, lc.ErrNotPrepared) {
				t.Fatalf("zero Kit Release: %v, want ErrNotPrepared", err)
			}
		})
		misNoPanic(t, "zero Kit Owner", func() {
			if !zk.Owner().IsZero() {
				t.Fatal("zero Kit has an owner")
			}
		})
		var zc lc.Child
		misNoPanic(t, "zero Child Call", func() {
			if _, err := zc.Call(context.Background(), "x"); !errors.Is(err, lc.ErrZeroChild) {
				t.Fatalf("zero Child Call: %v, want ErrZeroChild", err)
			}
		})
	})
}

// TestOwnerInUse: one live Kit per WithOwner id per engine instance; the
// id is free again after Release, on another engine, and for another id.
func TestOwnerInUse(t *testing.T) {
	sup, other := misSup(t), misSup(t)
	ts := func() []tools.Tool { return []tools.Tool{lc.Backgroundable(misBlocked("job"))} }
	prep := func(e *work.Engine, owner string) (*lc.Kit, error) {
		return lc.Prepare(context.Background(), e, scripted.New(), ts(), lc.WithOwner(owner))
	}
	first, err := prep(sup, "coord")
	if err != nil {
		t.Fatal(err)
	}
	id := misLaunch(t, first, "job")
	for _, tc := range []struct {
		name   string
		engine *work.Engine
		owner  string
		want   error
	}{
		{"same engine, same owner", sup, "coord", lc.ErrOwnerInUse},
		{"same engine, other owner", sup, "coord-2", nil},
		{"other engine, same owner", other, "coord", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kit, err := prep(tc.engine, tc.owner)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("Prepare: err = %v, want %v", err, tc.want)
			}
			if err != nil {
				if !strings.Contains(err.Error(), `"coord"`) {
					t.Fatalf("err = %q does not name the owner", err)
				}
				return
			}
			if err := kit.Release(); err != nil {
				t.Fatal(err)
			}
		})
	}
	// The refused second Kit did not touch the first's Work.
	if st, err := sup.Status(t.Context(), first.Owner(), id); err != nil || st.State != work.StateRunning {
		t.Fatalf("first Kit's Work = %+v, %v; want running", st, err)
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	again, err := prep(sup, "coord")
	if err != nil {
		t.Fatalf("Prepare after Release: %v", err)
	}
	if err := first.Release(); err != nil { // a stale Release leaves the new Kit alone
		t.Fatal(err)
	}
	id2 := misLaunch(t, again, "job")
	if st, err := sup.Status(t.Context(), again.Owner(), id2); err != nil || st.State != work.StateRunning {
		t.Fatalf("new Kit's Work = %+v, %v; want running", st, err)
	}
	if _, err := prep(sup, "coord"); !errors.Is(err, lc.ErrOwnerInUse) {
		t.Fatalf("second live Kit after the stale Release: err = %v, want ErrOwnerInUse", err)
	}
	if err := again.Release(); err != nil {
		t.Fatal(err)
	}
}

// TestOwnerInUseConcurrent: of many concurrent Prepares of one owner, one
// wins; after its Release the registry is empty.
func TestOwnerInUseConcurrent(t *testing.T) {
	sup := misSup(t)
	const n = 16
	var wg sync.WaitGroup
	kits := make(chan *lc.Kit, n)
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			kit, err := lc.Prepare(context.Background(), sup, scripted.New(),
				[]tools.Tool{lc.Backgroundable(misEcho(fmt.Sprintf("job%d", i)))}, lc.WithOwner("coord"))
			if err != nil {
				errs <- err
				return
			}
			kits <- kit
		}()
	}
	wg.Wait()
	close(kits)
	close(errs)
	if len(kits) != 1 {
		t.Fatalf("%d Kits prepared, want 1", len(kits))
	}
	for err := range errs {
		if !errors.Is(err, lc.ErrOwnerInUse) {
			t.Fatalf("err = %v, want ErrOwnerInUse", err)
		}
	}
	for kit := range kits {
		if err := kit.Release(); err != nil {
			t.Fatal(err)
		}
	}
	kit, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{lc.Backgroundable(misEcho("job"))}, lc.WithOwner("coord"))
	if err != nil {
		t.Fatalf("Prepare after the winner's Release: %v", err)
	}
	_ = kit.Release()
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

// Prepare and Retrofit probe the engine under their ctx: a cancelled one
// fails them with context.Canceled.
func TestPrepareProbesUnderTheCallersContext(t *testing.T) {
	eng := driver.NewEngine(ctxEngine{driver.Forwarder{Engine: misSup(t)}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ts := []tools.Tool{lc.Backgroundable(misEcho("job"))}
	if _, err := lc.Prepare(ctx, eng, scripted.New(), ts); !errors.Is(err, context.Canceled) {
		t.Fatalf("Prepare: err = %v, want context.Canceled", err)
	}
	agent := agents.NewOpenAIFunctionsAgent(scripted.New(), ts)
	if _, _, err := lc.Retrofit(ctx, eng, agent); !errors.Is(err, context.Canceled) {
		t.Fatalf("Retrofit: err = %v, want context.Canceled", err)
	}
	kit, err := lc.Prepare(context.Background(), eng, scripted.New(), ts)
	if err != nil {
		t.Fatalf("Prepare with a live ctx: %v", err)
	}
	_ = kit.Release()
}

// The live-owner registry does not keep the Kit alive: an unreleased
// WithOwner Kit that is dropped is collected (middleware's owner tests
// show that its id leaves the registry when its engine goes too).
func TestOwnerRegistryHoldsNoKit(t *testing.T) {
	kitGone := make(chan struct{})
	sup := misSup(t)
	func() {
		kit, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{lc.Backgroundable(misEcho("job"))}, lc.WithOwner("weakly-held"))
		if err != nil {
			t.Fatal(err)
		}
		runtime.AddCleanup(kit, func(ch chan struct{}) { close(ch) }, kitGone)
	}()
	deadline := time.After(10 * time.Second)
	for {
		runtime.GC()
		select {
		case <-kitGone:
			if _, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{lc.Backgroundable(misEcho("job"))}, lc.WithOwner("weakly-held")); !errors.Is(err, lc.ErrOwnerInUse) {
				t.Fatalf("Prepare of the dropped Kit's id on its live engine: err = %v, want ErrOwnerInUse", err)
			}
			return
		case <-deadline:
			t.Fatal("the unreleased Kit was not collected")
		case <-time.After(10 * time.Millisecond): // the collector runs at its own pace
		}
	}
}
