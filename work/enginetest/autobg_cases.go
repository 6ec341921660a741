package enginetest

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// The middleware's opt-in auto-background option over the Engine: a
// call made without run_in_background is a launch (Start, with the
// tool-call id) awaited with Result up to a bound, so that it holds on
// every Engine by construction. These cases run it on the Engine under
// test: the move at the bound, a call that completes in time, the limits
// it counts against and its idempotency.

// autoBound is the bound of the suite's slow calls (a controlled child
// that does not return by then); fast calls (Echo) get fastBound, long
// enough for any Engine to run them in time.
const (
	autoBound = 300 * time.Millisecond
	fastBound = 30 * time.Second
)

// autoSet prepares o on the Engine with Func (moving after autoBound) and
// Echo (after fastBound), both backgroundable.
func (v *env) autoSet(o work.Owner) *middleware.Kit {
	v.t.Helper()
	child := func(label string, after time.Duration) middleware.BackgroundChild {
		c := v.cfg.Children[label]
		return middleware.Backgroundable(middleware.Child{Kind: c.Kind, Run: c.Run, AutoBackground: &middleware.AutoBackground{After: after}})
	}
	set, err := middleware.PrepareContext(v.ctx, v.e, o, map[string]any{Func: child(Func, autoBound), Echo: child(Echo, fastBound)})
	if err != nil {
		v.t.Fatalf("middleware.Prepare: %v", err)
	}
	v.t.Cleanup(func() { _ = set.Release() })
	return set
}

func setTool(t *testing.T, set *middleware.Kit, name string) middleware.Tool {
	t.Helper()
	for _, tl := range set.Tools() {
		if tl.Name() == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

// input is a child call's JSON input without run_in_background.
func input(s string) string {
	b, _ := json.Marshal(map[string]string{"input": s})
	return string(b)
}

// moved calls Func with token (in ctx; c controls its child) and checks
// that it returns the work.ref of its Work no earlier than autoBound (on an
// Engine with an exact wait clock) and within 30 s of it; it returns the
// Work's id and how long after the bound the ref came.
func (v *env) moved(ctx context.Context, set *middleware.Kit, token string, c *control) (string, time.Duration) {
	v.t.Helper()
	type reply struct {
		out string
		err error
	}
	done := make(chan reply, 1)
	fn := setTool(v.t, set, Func)
	begin := time.Now()
	go func() {
		out, err := fn.Call(ctx, input(token))
		done <- reply{out, err}
	}()
	var r reply
	select {
	case r = <-done:
	case <-time.After(autoBound + 30*time.Second):
		v.finish(c, "", nil) // the call waits for its child: let it return
		v.t.Fatalf("the call did not return within 30 s of its bound %v", autoBound)
	}
	out, err := r.out, r.err
	el := time.Since(begin)
	if err != nil {
		v.t.Fatalf("the call returned a Go error: %v", err)
	}
	var ref struct {
		Kind, ID string
	}
	if json.Unmarshal([]byte(out), &ref) != nil || ref.Kind != "work.ref" || !boundary.IsID(ref.ID) {
		v.t.Fatalf("a call still running at its bound returned %s; want a work.ref", out)
	}
	st := v.status(set.Owner(), ref.ID)
	if want, _ := json.Marshal(st.Work); string(want) != out {
		v.t.Fatalf("the call returned %s; want its Work's ref %s", out, want)
	}
	if v.caps.ExactWaitClock && el < autoBound {
		v.t.Fatalf("the call moved after %v, before its bound %v", el, autoBound)
	}
	return ref.ID, el - autoBound
}

// autoBackground: a call whose child is still running at the bound
// returns its Work's ref, the Work runs on and its output is read with the
// work tool; a call whose child returns in time gets the exact output and
// leaves its Work completed and already read; an explicit
// "run_in_background": false is a foreground call.
func (s *suite) autoBackground(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "auto")
	set := v.autoSet(o)
	token, c := newControl(t, "")
	id, _ := v.moved(v.ctx, set, token, c)
	if st := v.status(o, id); st.State.Terminal() {
		t.Fatalf("the moved Work is %s", st.State)
	}
	v.waitStartedOf(o, work.Ref{ID: id}, c)
	v.finish(c, "moved output", nil)
	if out, _ := setTool(t, set, middleware.WorkToolName).Call(v.ctx, `{"action":"result","id":"`+id+`","timeout":"30s"}`); out != "moved output" {
		v.settle(o, id)
		t.Fatalf("the work tool's result = %s", out)
	}
	var moves []observe.Event
	for _, e := range v.rec.Events() {
		if e.Type == observe.EventBackgrounded {
			moves = append(moves, e)
		}
	}
	if len(moves) != 1 || moves[0].WorkID != id || moves[0].Target != Func || moves[0].Duration != autoBound ||
		(moves[0].From != work.StateQueued && moves[0].From != work.StateRunning) {
		t.Fatalf("EventBackgrounded = %+v; want one for %s", moves, id)
	}

	// In time: the exact output, the Work completed and read.
	if out, _ := setTool(t, set, Echo).Call(v.ctx, input("fast and exact")); out != "fast and exact" {
		t.Fatalf("a call that completes in time = %s", out)
	}
	calls := v.rec.Calls()
	fast := calls[len(calls)-1]
	if fast.Call.Tool != Echo || fast.Call.AutoBackground != fastBound || !boundary.IsID(fast.End.WorkID) {
		t.Fatalf("the fast call as observed: %+v", fast)
	}
	if st := v.status(o, fast.End.WorkID); st.State != work.StateCompleted || !st.ResultRead {
		t.Fatalf("the fast call's Work: %s, read %v; want completed and read", st.State, st.ResultRead)
	}

	// Explicit false: no Work while it runs, the exact output.
	before, _ := v.e.List(v.ctx, o)
	token2, c2 := newControl(t, "")
	reply := make(chan string, 1)
	go func() {
		out, _ := setTool(t, set, Func).Call(v.ctx, `{"input":"`+token2+`","run_in_background":false}`)
		reply <- out
	}()
	v.waitStarted(c2)
	if l, _ := v.e.List(v.ctx, o); len(l) != len(before) {
		v.finish(c2, "", nil)
		t.Fatalf("an explicit foreground call admitted Work: %d listed, %d before", len(l), len(before))
	}
	v.finish(c2, "foreground output", nil)
	if out := <-reply; out != "foreground output" {
		t.Fatalf("explicit false = %s", out)
	}
}

// autoBackgroundLimits: a call that may move is admitted as Work, so it
// counts against the owner's limits as a launch does, and Work still
// queued at the bound moves as queued.
func (s *suite) autoBackgroundLimits(t *testing.T) {
	v := s.env(t, func(c *Config) { c.MaxRunning, c.MaxOutstanding = 1, 2 })
	o := owner(t, "auto-limits")
	set := v.autoSet(o)
	first, c1 := v.running(o, Func, "")
	token, c2 := newControl(t, "")
	id, _ := v.moved(v.ctx, set, token, c2)
	if st := v.status(o, id); st.State != work.StateQueued {
		t.Fatalf("the Work behind a full running limit moved %s; want queued", st.State)
	}
	out, _ := setTool(t, set, Echo).Call(v.ctx, input("over"))
	var refused struct{ Error struct{ Code string } }
	if json.Unmarshal([]byte(out), &refused) != nil || refused.Error.Code != work.ErrLimit.Code {
		t.Fatalf("a call over the outstanding limit = %s; want the error object limit_exceeded", out)
	}
	v.finish(c1, "", nil)
	v.settle(o, first.ID)
	v.waitStartedOf(o, work.Ref{ID: id}, c2)
	v.finish(c2, "second", nil)
	if st, out := v.settle(o, id); st.State != work.StateCompleted || out != "second" {
		t.Fatalf("the moved Work: %s %q", st.State, out)
	}
}

// autoBackgroundIdempotency: the same tool-call id and input names the
// same Work: its ref while it runs, its exact output once it completed;
// other input under the same id is a conflict.
func (s *suite) autoBackgroundIdempotency(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "auto-idem")
	set := v.autoSet(o)
	ctx := middleware.WithCallID(v.ctx, "call_auto_1")
	token, c := newControl(t, "")
	id, _ := v.moved(ctx, set, token, c)
	if again, _ := v.moved(ctx, set, token, c); again != id {
		t.Fatalf("a repeated call moved Work %s; want %s", again, id)
	}
	out, _ := setTool(t, set, Func).Call(ctx, input(token+"-other"))
	var refused struct{ Error struct{ Code string } }
	if json.Unmarshal([]byte(out), &refused) != nil || refused.Error.Code != work.ErrConflict.Code {
		t.Fatalf("other input under the same call id = %s; want the error object conflict", out)
	}
	v.waitStartedOf(o, work.Ref{ID: id}, c)
	v.finish(c, "idempotent output", nil)
	v.settle(o, id)
	if out, _ := setTool(t, set, Func).Call(ctx, input(token)); out != "idempotent output" {
		t.Fatalf("the call repeated after completion = %s; want the output", out)
	}
	if l, err := v.e.List(v.ctx, o); err != nil || len(l) != 1 {
		t.Fatalf("repeated calls admitted %d Works (%v)", len(l), err)
	}
	if n := c.runs.Load(); n != 1 {
		t.Fatalf("the child ran %d times", n)
	}
}

// AutoBackgroundCallsEnv sets how many calls AutoBackgroundLatency
// measures (default 3): AGENTWORK_AUTOBG_CALLS=20 for the figures.
const AutoBackgroundCallsEnv = "AGENTWORK_AUTOBG_CALLS"

// autoBackgroundLatency measures, over several calls one after another,
// how long after the bound a moving call returns its ref, and what the
// option costs a call that does not move (Echo with the option against
// Echo with "run_in_background": false, a plain foreground call, in the
// same loop), and logs the medians and the maxima. It fails only when the
// ref comes more than 10 s after the bound (the goal is 50 ms in-process,
// 1 s on a durable engine: see the log) or a call returns the wrong output.
func (s *suite) autoBackgroundLatency(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "auto-latency")
	set := v.autoSet(o)
	n := 3
	if e, err := strconv.Atoi(os.Getenv(AutoBackgroundCallsEnv)); err == nil && e > 0 {
		n = e
	}
	lat := make([]time.Duration, 0, n)
	var inTime, fg []time.Duration
	timed := func(in string, into *[]time.Duration) {
		begin := time.Now()
		if out, _ := setTool(t, set, Echo).Call(v.ctx, in); out != "in time" {
			t.Fatalf("Echo(%s) = %s", in, out)
		}
		*into = append(*into, time.Since(begin))
	}
	for range n {
		token, c := newControl(t, "")
		id, late := v.moved(v.ctx, set, token, c)
		lat = append(lat, late)
		v.waitStartedOf(o, work.Ref{ID: id}, c)
		v.finish(c, "", nil)
		v.settle(o, id)
		timed(input("in time"), &inTime)
		timed(`{"input":"in time","run_in_background":false}`, &fg)
	}
	for _, d := range [][]time.Duration{lat, inTime, fg} {
		slices.Sort(d)
	}
	t.Logf("bound %v, %d calls: the ref came after the bound by median %v, max %v", autoBound, n, lat[n/2], lat[n-1])
	t.Logf("a call that does not move: median %v, max %v with the option; median %v, max %v as a plain foreground call", inTime[n/2], inTime[n-1], fg[n/2], fg[n-1])
	if lat[n-1] > 10*time.Second {
		t.Fatalf("a ref came %v after the bound", lat[n-1])
	}
}
