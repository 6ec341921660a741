package middleware_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// The opt-in departures from the crux contract: a call that moves to the
// background after a bound (Child.AutoBackground, WithAutoBackground) and
// background as a child's default (Child.BackgroundByDefault).

const bound = 5 * time.Second

func autoChild(run func(context.Context, string) (string, error), after time.Duration) middleware.BackgroundChild {
	return middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: run,
		AutoBackground: &middleware.AutoBackground{After: after}})
}

// goCall calls tl on its own goroutine; the reply arrives on the channel.
func goCall(t *testing.T, ctx context.Context, tl middleware.Tool, input string) <-chan string {
	t.Helper()
	out := make(chan string, 1)
	go func() {
		s, err := tl.Call(ctx, input)
		if err != nil {
			s = "Go error: " + err.Error()
		}
		out <- s
	}()
	return out
}

// waiting blocks until n timers are pending on the env's clock (the
// calls' Result waits), failing the test, not hanging it, when they do not
// come within 10 s.
func (e *env) waiting(n int) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.clock.BlockUntilContext(ctx, n); err != nil {
		e.t.Fatalf("%d waits are not pending (%d are): a call stopped waiting", n, e.clock.Pending())
	}
}

func events(o *observer, typ observe.EventType) []observe.Event {
	var out []observe.Event
	for _, e := range o.Events() {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// TestAutoBackgroundMovesAtTheBound: a call without run_in_background
// whose child is still running at the bound returns the Work's work.ref at
// exactly the bound (on the engine's clock); the Work runs on and its
// output is read with the work tool. The move is EventBackgrounded, the
// call a launch that names its bound.
func TestAutoBackgroundMovesAtTheBound(t *testing.T) {
	e := newEnv(t)
	g := e.gate("the exact output", nil)
	s := e.prepare("coord", map[string]any{"slow": autoChild(g.run, bound)})
	reply := goCall(t, context.Background(), tool(t, s, "slow"), `{"input":"x"}`)
	<-g.started
	e.waiting(1) // the call's wait
	e.clock.Advance(bound - time.Millisecond)
	e.waiting(1) // still waiting just before the bound
	select {
	case out := <-reply:
		t.Fatalf("the call returned before the bound: %s", out)
	default:
	}
	e.clock.Advance(time.Millisecond)
	out := <-reply
	id := refID(t, out)
	st, err := e.sup.Status(context.Background(), s.Owner(), id)
	if err != nil || st.State != work.StateRunning {
		t.Fatalf("the moved Work: %+v, %v; want running", st, err)
	}
	evs := events(e.obs, observe.EventBackgrounded)
	if len(evs) != 1 {
		t.Fatalf("EventBackgrounded: %+v; want one", evs)
	}
	if ev := evs[0]; ev.WorkID != id || ev.Target != "slow" || ev.From != work.StateRunning || ev.Duration != bound ||
		!ev.Time.Equal(t0.Add(bound)) || ev.Owner != s.Owner().ID() {
		t.Fatalf("EventBackgrounded = %+v; want Work %s, target slow, from running, the bound, at t0+bound", ev, id)
	}
	calls := e.obs.Calls()
	if c := calls[len(calls)-1]; c.Call.Kind != observe.ToolCallLaunch || c.Call.AutoBackground != bound || !c.Ended ||
		c.End.WorkID != id || c.End.Outcome != "ok" {
		t.Fatalf("the call as observed: %+v", c)
	}
	g.open()
	if got := act(t, s, map[string]string{"action": "result", "id": id}); got != "the exact output" {
		t.Fatalf("result = %s", got)
	}
}

// TestAutoBackgroundLongBound: a bound longer than one Result wait (30 s)
// is waited for in full.
func TestAutoBackgroundLongBound(t *testing.T) {
	e := newEnv(t)
	g := e.gate("out", nil)
	s := e.prepare("coord", map[string]any{"slow": autoChild(g.run, 45*time.Second)})
	reply := goCall(t, context.Background(), tool(t, s, "slow"), `{"input":"x"}`)
	<-g.started
	e.waiting(1)
	e.clock.Advance(work.MaxResultWait) // the first wait ends; the call waits again
	e.waiting(1)
	select {
	case out := <-reply:
		t.Fatalf("the call returned after one Result wait: %s", out)
	default:
	}
	e.clock.Advance(45*time.Second - work.MaxResultWait)
	refID(t, <-reply)
	if ev := events(e.obs, observe.EventBackgrounded); len(ev) != 1 || !ev[0].Time.Equal(t0.Add(45*time.Second)) {
		t.Fatalf("EventBackgrounded = %+v; want one at t0+45s", ev)
	}
}

// TestAutoBackgroundCompletesInTime: a child that returns before the bound
// gives the exact output; its Work is listed completed and already read,
// and never moved.
func TestAutoBackgroundCompletesInTime(t *testing.T) {
	e := newEnv(t)
	s := e.prepare("coord", map[string]any{"fast": autoChild(func(_ context.Context, in string) (string, error) {
		return "exact: " + in, nil
	}, bound)})
	if out := call(t, tool(t, s, "fast"), `{"input":"a b"}`); out != "exact: a b" {
		t.Fatalf("out = %s", out)
	}
	l, err := e.sup.List(context.Background(), s.Owner())
	if err != nil || len(l) != 1 || l[0].State != work.StateCompleted || !l[0].ResultRead {
		t.Fatalf("List = %+v, %v; want one completed Work, already read", l, err)
	}
	if ev := events(e.obs, observe.EventBackgrounded); len(ev) != 0 {
		t.Fatalf("a call that did not move reported %+v", ev)
	}
	calls := e.obs.Calls()
	if c := calls[len(calls)-1]; c.End.WorkID != l[0].Work.ID || c.End.Outcome != "ok" {
		t.Fatalf("the call as observed: %+v", c)
	}
}

// TestAutoBackgroundFailsInTime: a child that fails, or whose call's
// context ends, before the bound answers as a foreground call does.
func TestAutoBackgroundFailsInTime(t *testing.T) {
	e := newEnv(t)
	fail := func(context.Context, string) (string, error) { return "", errors.New("canary failure") }
	s := e.prepare("coord", map[string]any{
		"auto":  autoChild(fail, bound),
		"plain": middleware.Child{Kind: work.KindFunction, Run: fail},
	})
	want := call(t, tool(t, s, "plain"), `{"input":"x"}`)
	if got := call(t, tool(t, s, "auto"), `{"input":"x"}`); got != want || errorCode(t, got) != work.ErrChildFailed.Code {
		t.Fatalf("a failure before the bound = %s; want the foreground call's %s", got, want)
	}
	calls := e.obs.Calls()
	if c := calls[len(calls)-1]; c.End.Outcome != "failed" || c.End.ErrorClass != work.ClassError || c.End.WorkID == "" {
		t.Fatalf("the failed call as observed: %+v", c)
	}

	// The caller's context ends: the Work is cancelled, the call answers
	// cancelled as a foreground call does.
	g := e.gate("late", nil)
	g.cooperative = true
	s2 := e.prepare("coord2", map[string]any{"slow": autoChild(g.run, bound)})
	ctx, cancel := context.WithCancel(context.Background())
	reply := goCall(t, ctx, tool(t, s2, "slow"), `{"input":"x"}`)
	<-g.started
	cancel()
	if got := <-reply; errorCode(t, got) != work.ErrCancelled.Code {
		t.Fatalf("a call whose ctx ended = %s; want code cancelled", got)
	}
	l, _ := e.sup.List(context.Background(), s2.Owner())
	if len(l) != 1 || (l[0].State != work.StateCancelled && l[0].State != work.StateCancelRequested) {
		t.Fatalf("the abandoned Work: %+v; want it cancelled", l)
	}
	if ev := events(e.obs, observe.EventBackgrounded); len(ev) != 0 {
		t.Fatalf("a call that did not move reported %+v", ev)
	}
}

// TestAutoBackgroundExplicitFalse: "run_in_background": false is a
// foreground call (no Work exists while it runs) that returns the exact
// output however long it takes.
func TestAutoBackgroundExplicitFalse(t *testing.T) {
	e := newEnv(t)
	g := e.gate("exact", nil)
	s := e.prepare("coord", map[string]any{"slow": autoChild(g.run, bound)})
	reply := goCall(t, context.Background(), tool(t, s, "slow"), `{"input":"x","run_in_background":false}`)
	<-g.started
	if l := e.list(s.Owner()); l != "[]" {
		t.Fatalf("an explicit foreground call admitted Work: %s", l)
	}
	e.clock.Advance(2 * bound)
	g.open()
	if out := <-reply; out != "exact" {
		t.Fatalf("out = %s", out)
	}
}

// TestAutoBackgroundIdempotent: the same tool-call id and input gives the
// same Work: its ref while it runs, its output once it completed; other
// input under the same id is a conflict.
func TestAutoBackgroundIdempotent(t *testing.T) {
	e := newEnv(t)
	g := e.gate("exact", nil)
	s := e.prepare("coord", map[string]any{"slow": autoChild(g.run, bound)})
	ctx := middleware.WithCallID(context.Background(), "call_1")
	first := func() string {
		reply := goCall(t, ctx, tool(t, s, "slow"), `{"input":"x"}`)
		e.waiting(1)
		e.clock.Advance(bound)
		return <-reply
	}
	a := first()
	<-g.started
	if b := first(); b != a {
		t.Fatalf("a repeated call = %s; want %s", b, a)
	}
	if out := callCtx(t, ctx, tool(t, s, "slow"), `{"input":"y"}`); errorCode(t, out) != work.ErrConflict.Code {
		t.Fatalf("other input under the same call id = %s; want conflict", out)
	}
	g.open()
	id := refID(t, a)
	if out := act(t, s, map[string]string{"action": "result", "id": id}); out != "exact" {
		t.Fatalf("result = %s", out)
	}
	if out := callCtx(t, ctx, tool(t, s, "slow"), `{"input":"x"}`); out != "exact" {
		t.Fatalf("a repeated call after completion = %s; want the output", out)
	}
	if l, _ := e.sup.List(context.Background(), s.Owner()); len(l) != 1 {
		t.Fatalf("repeated calls admitted %d Works", len(l))
	}
}

// TestAutoBackgroundLimits: a call that may move is admitted as Work, so
// it counts against the owner's limits as a launch does (a foreground
// call does not), and Work still queued at the bound moves as queued.
func TestAutoBackgroundLimits(t *testing.T) {
	e := newEnv(t, work.WithMaxOutstanding(2), work.WithMaxRunning(1))
	g := e.gate("out", nil)
	s := e.prepare("coord", map[string]any{"slow": autoChild(g.run, bound)})
	launch(t, s, "slow", "running")
	<-g.started
	reply := goCall(t, context.Background(), tool(t, s, "slow"), `{"input":"queued"}`)
	e.waiting(1)
	e.clock.Advance(bound)
	id := refID(t, <-reply)
	if ev := events(e.obs, observe.EventBackgrounded); len(ev) != 1 || ev[0].WorkID != id || ev[0].From != work.StateQueued {
		t.Fatalf("EventBackgrounded = %+v; want one from queued", ev)
	}
	if out := call(t, tool(t, s, "slow"), `{"input":"third"}`); errorCode(t, out) != work.ErrLimit.Code {
		t.Fatalf("a third call over the outstanding limit of 2 = %s; want limit_exceeded", out)
	}
	fg := goCall(t, context.Background(), tool(t, s, "slow"), `{"input":"fg","run_in_background":false}`)
	g.open()
	if out := <-fg; out != "out" {
		t.Fatalf("a foreground call at the limit = %s; want the output", out)
	}
}

// TestAutoBackgroundRelease: Release while a call waits answers released.
func TestAutoBackgroundRelease(t *testing.T) {
	e := newEnv(t)
	g := e.gate("out", nil)
	g.cooperative = true
	s := e.prepare("coord", map[string]any{"slow": autoChild(g.run, bound)})
	reply := goCall(t, context.Background(), tool(t, s, "slow"), `{"input":"x"}`)
	<-g.started
	e.waiting(1)
	if err := s.Release(); err != nil {
		t.Fatal(err)
	}
	if out := <-reply; errorCode(t, out) != middleware.CodeReleased && errorCode(t, out) != work.ErrCancelled.Code {
		t.Fatalf("a call waiting at Release = %s; want released or cancelled", out)
	}
}

// TestBackgroundByDefault: an absent run_in_background (plain text too)
// launches; false runs in the foreground with the exact output.
func TestBackgroundByDefault(t *testing.T) {
	e := newEnv(t)
	s := e.prepare("coord", map[string]any{"bg": middleware.Backgroundable(middleware.Child{Kind: work.KindFunction,
		BackgroundByDefault: true, Run: func(_ context.Context, in string) (string, error) { return "exact " + in, nil }})})
	bg := tool(t, s, "bg")
	for _, in := range []string{`{"input":"a"}`, `plain text`, `{"input":"b","run_in_background":true}`} {
		refID(t, call(t, bg, in))
	}
	if out := call(t, bg, `{"input":"c","run_in_background":false}`); out != "exact c" {
		t.Fatalf("explicit false = %s; want the exact output", out)
	}
	if l, _ := e.sup.List(context.Background(), s.Owner()); len(l) != 3 {
		t.Fatalf("%d Works; want the three launches", len(l))
	}
}

// TestBackgroundOptionsPrepareErrors: a bound of zero or less, and either
// option on a child that is not backgroundable, fail preparation.
func TestBackgroundOptionsPrepareErrors(t *testing.T) {
	run := func(context.Context, string) (string, error) { return "", nil }
	for _, tc := range []struct {
		name  string
		entry any
		opts  []middleware.Option
	}{
		{"zero bound", autoChild(run, 0), nil},
		{"negative bound", autoChild(run, -time.Second), nil},
		{"auto on a foreground child", middleware.Child{Kind: work.KindFunction, Run: run, AutoBackground: &middleware.AutoBackground{After: bound}}, nil},
		{"default on a foreground child", middleware.Child{Kind: work.KindFunction, Run: run, BackgroundByDefault: true}, nil},
		{"zero Kit default", middleware.Child{Kind: work.KindFunction, Run: run}, []middleware.Option{middleware.WithAutoBackground(0)}},
		{"negative Set default", middleware.Child{Kind: work.KindFunction, Run: run}, []middleware.Option{middleware.WithAutoBackground(-1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			_, err := middleware.PrepareWith(context.Background(), e.sup, work.NewOwner("o"), map[string]any{"c": tc.entry}, tc.opts...)
			if !errors.Is(err, middleware.ErrInvalidBackgroundOption) {
				t.Fatalf("err = %v; want ErrInvalidBackgroundOption", err)
			}
		})
	}
}

// TestBackgroundOptionsWhatTheModelSees: only a child with an option on
// has a different description or schema; the Kit's default reaches every
// backgroundable child without its own bound, and no foreground child.
func TestBackgroundOptionsWhatTheModelSees(t *testing.T) {
	e := newEnv(t)
	run := func(context.Context, string) (string, error) { return "", nil }
	child := func() middleware.Child {
		return middleware.Child{Kind: work.KindFunction, Run: run, Description: "Does it."}
	}
	own := child()
	own.AutoBackground = &middleware.AutoBackground{After: 90 * time.Second}
	def := child()
	def.BackgroundByDefault = true
	s, err := middleware.PrepareWith(context.Background(), e.sup, work.NewOwner("o"), map[string]any{
		"own": middleware.Backgroundable(own), "set": middleware.Backgroundable(child()),
		"default": middleware.Backgroundable(def), "fg": child()}, middleware.WithAutoBackground(1500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	plain := e.prepare("p", map[string]any{"plain": middleware.Backgroundable(child())})
	const launchNote = ` Set "run_in_background": true to start it in the background and get a work.ref at once; then use the work tool.`
	if d := tool(t, plain, "plain").Description(); d != "Does it."+launchNote {
		t.Fatalf("a child without options: %q", d)
	}
	for label, want := range map[string]string{
		"own":     launchNote + ` A call without "run_in_background" that takes longer than 90 seconds returns a work.ref`,
		"set":     `takes longer than 1.5 seconds returns a work.ref instead of the output`,
		"default": ` It runs in the background by default: a call returns a work.ref at once; then use the work tool. Set "run_in_background": false to wait`,
	} {
		if d := tool(t, s, label).Description(); !strings.Contains(d, want) {
			t.Errorf("%s: description %q lacks %q", label, d, want)
		}
	}
	if d := tool(t, s, "fg").Description(); d != "Does it." {
		t.Errorf("a foreground child: %q", d)
	}
	prop := func(set *middleware.Kit, label string) map[string]any {
		sch := tool(t, set, label).(middleware.Schemer).Schema()
		return sch["properties"].(map[string]any)["run_in_background"].(map[string]any)
	}
	if p := prop(s, "default"); p["default"] != true || !strings.Contains(p["description"].(string), "default true") {
		t.Errorf("the default child's run_in_background: %v", p)
	}
	if p, q := prop(s, "own"), prop(plain, "plain"); mustJSON(t, p) != mustJSON(t, q) {
		t.Errorf("an auto child's run_in_background %v differs from a plain child's %v", p, q)
	}
}
