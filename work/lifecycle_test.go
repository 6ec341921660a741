package work_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// transitions returns the From->To edges recorded for id, in order.
func transitions(evs []observe.Event) []string {
	var out []string
	for _, e := range evs {
		if e.To != "" {
			out = append(out, string(e.From)+">"+string(e.To))
		}
	}
	return out
}

func wantTransitions(t *testing.T, h *harness, id string, want ...string) {
	t.Helper()
	got := transitions(h.obs.events(id))
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("transitions = %v, want %v", got, want)
	}
}

func TestCancelQueuedNeverRuns(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(1))
	_, blocker := h.running(work.NewOwner("blocker"), fn)
	ran := make(chan struct{}, 1)
	ref, err := h.s.Start(t.Context(), work.Spec{Owner: coord, Target: agent, Run: func(context.Context) (string, error) {
		ran <- struct{}{}
		return "", nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(3 * time.Second)
	r, err := h.s.Cancel(t.Context(), coord, ref.ID)
	if err != nil || !r.Accepted || r.State != work.StateCancelled {
		t.Fatalf("cancel = %+v %v", r, err)
	}
	ev := h.obs.waitTerminal(ref.ID)
	if ev.Duration != 3*time.Second || ev.ErrorClass != work.ClassCancelled {
		t.Fatalf("cancelled event = %+v", ev)
	}
	st := h.status(coord, ref.ID)
	if !st.StartedAt.IsZero() || !st.FinishedAt.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("status = %+v", st)
	}
	blocker.complete("") // frees the slot; the cancelled Work must not take it
	h2, c2 := h.running(coord, agent)
	c2.complete("x")
	h.obs.waitTerminal(h2.ID)
	select {
	case <-ran:
		t.Fatal("cancelled queued work ran")
	default:
	}
	wantTransitions(t, h, ref.ID, ">queued", "queued>cancelled")
	if r, _ := h.s.Cancel(t.Context(), coord, ref.ID); r.Accepted || r.State != work.StateCancelled {
		t.Fatalf("second cancel = %+v", r)
	}
}

func TestCancelRunning(t *testing.T) {
	for _, tt := range []struct {
		name string
		end  func(c *child)
	}{
		{"ctx.Err", func(c *child) { c.returnCtxErr() }},
		{"wrapped ctx.Err", func(c *child) {
			c.do(func(ctx context.Context) (string, error) {
				<-ctx.Done()
				return "", fmt.Errorf("step 3: %w", ctx.Err())
			})
		}},
		{"context.Cause", func(c *child) {
			c.do(func(ctx context.Context) (string, error) { <-ctx.Done(); return "", context.Cause(ctx) })
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			ref, c := h.running(coord, agent)
			r, err := h.s.Cancel(t.Context(), coord, ref.ID)
			if err != nil || !r.Accepted || r.State != work.StateCancelRequested {
				t.Fatalf("cancel = %+v %v", r, err)
			}
			if c.ctx.Err() == nil {
				t.Fatal("child context not cancelled")
			}
			if got := h.status(coord, ref.ID).State; got != work.StateCancelRequested {
				t.Fatalf("state = %s", got)
			}
			if r, _ := h.s.Cancel(t.Context(), coord, ref.ID); !r.Accepted || r.State != work.StateCancelRequested {
				t.Fatalf("repeated cancel = %+v", r)
			}
			tt.end(c)
			if ev := h.obs.waitTerminal(ref.ID); ev.To != work.StateCancelled || ev.ErrorClass != work.ClassCancelled {
				t.Fatalf("terminal = %+v", ev)
			}
			wantTransitions(t, h, ref.ID, ">queued", "queued>running", "running>cancel-requested", "cancel-requested>cancelled")
		})
	}
}

func TestCompletionWinsAfterCancelRequested(t *testing.T) {
	h := newHarness(t)
	ref, c := h.running(coord, agent)
	if _, err := h.s.Cancel(t.Context(), coord, ref.ID); err != nil {
		t.Fatal(err)
	}
	c.complete("finished anyway")
	h.obs.waitTerminal(ref.ID)
	st, out, err := h.s.Result(t.Context(), coord, ref.ID, 0)
	if err != nil || st.State != work.StateCompleted || out != "finished anyway" || !st.ResultAvailable {
		t.Fatalf("result = %+v %q %v", st, out, err)
	}
	wantTransitions(t, h, ref.ID, ">queued", "queued>running", "running>cancel-requested", "cancel-requested>completed")
}

func TestUnrelatedFailureAfterCancelStaysFailed(t *testing.T) {
	h := newHarness(t)
	ref, c := h.running(coord, agent)
	if _, err := h.s.Cancel(t.Context(), coord, ref.ID); err != nil {
		t.Fatal(err)
	}
	c.fail()
	if ev := h.obs.waitTerminal(ref.ID); ev.To != work.StateFailed || ev.ErrorClass != work.ClassError {
		t.Fatalf("terminal = %+v", ev)
	}
	st, out, _ := h.s.Result(t.Context(), coord, ref.ID, 0)
	if st.State != work.StateFailed || out != "" || st.ResultAvailable {
		t.Fatalf("result = %+v %q", st, out)
	}
}

func TestContextErrorWithoutCancelIsFailure(t *testing.T) {
	h := newHarness(t)
	ref, c := h.running(coord, agent)
	c.do(func(context.Context) (string, error) { return "", context.Canceled })
	if ev := h.obs.waitTerminal(ref.ID); ev.To != work.StateFailed || ev.ErrorClass != work.ClassError {
		t.Fatalf("terminal = %+v", ev)
	}
}

func TestPanicFailsWorkProcessSurvives(t *testing.T) {
	h := newHarness(t)
	ref, c := h.running(coord, agent)
	c.panics()
	ev := h.obs.waitTerminal(ref.ID)
	if ev.To != work.StateFailed || ev.ErrorClass != work.ClassPanic {
		t.Fatalf("terminal = %+v", ev)
	}
	// The engine keeps working.
	ref2, c2 := h.running(coord, agent)
	c2.complete("fine")
	if ev := h.obs.waitTerminal(ref2.ID); ev.To != work.StateCompleted {
		t.Fatalf("after panic: %+v", ev)
	}
	// panic(nil) is a panic too.
	ref3, c3 := h.running(coord, agent)
	c3.do(func(context.Context) (string, error) { panic(nil) })
	if ev := h.obs.waitTerminal(ref3.ID); ev.ErrorClass != work.ClassPanic {
		t.Fatalf("panic(nil): %+v", ev)
	}
}

func TestGoexitFailsWork(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(1))
	ref, c := h.running(coord, agent)
	c.do(func(context.Context) (string, error) { runtime.Goexit(); return "", nil })
	if ev := h.obs.waitTerminal(ref.ID); ev.To != work.StateFailed || ev.ErrorClass != work.ClassPanic {
		t.Fatalf("terminal = %+v", ev)
	}
	// The running slot was freed.
	ref2, c2 := h.running(coord, agent)
	c2.complete("")
	h.obs.waitTerminal(ref2.ID)
}

func TestDeadline(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: time.Minute}))
		ref, c := h.running(coord, agent)
		h.clk.Advance(time.Minute - time.Millisecond)
		if c.ctx.Err() != nil {
			t.Fatal("cancelled before the deadline")
		}
		h.clk.Advance(time.Millisecond)
		c.returnCtxErr()
		ev := h.obs.waitTerminal(ref.ID)
		if ev.To != work.StateFailed || ev.ErrorClass != work.ClassDeadline || ev.Duration != time.Minute {
			t.Fatalf("terminal = %+v", ev)
		}
		if h.clk.Pending() != 0 {
			t.Fatalf("%d timers left", h.clk.Pending())
		}
	})
	t.Run("spec override", func(t *testing.T) {
		h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: time.Hour}))
		c := h.child()
		ref, err := h.s.Start(t.Context(), work.Spec{Owner: coord, Target: agent, Run: c.run, Budget: work.Budget{MaxDuration: time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		<-c.started
		h.clk.Advance(time.Second)
		c.returnCtxErr()
		if ev := h.obs.waitTerminal(ref.ID); ev.ErrorClass != work.ClassDeadline {
			t.Fatalf("terminal = %+v", ev)
		}
	})
	t.Run("spec override clamped to the engine's", func(t *testing.T) {
		h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: time.Minute}))
		c := h.child()
		ref, err := h.s.Start(t.Context(), work.Spec{Owner: coord, Target: agent, Run: c.run, Budget: work.Budget{MaxDuration: time.Hour}})
		if err != nil {
			t.Fatal(err)
		}
		<-c.started
		h.clk.Advance(time.Minute)
		if c.ctx.Err() == nil {
			t.Fatal("an override above the engine's maximum was not clamped")
		}
		c.returnCtxErr()
		if ev := h.obs.waitTerminal(ref.ID); ev.ErrorClass != work.ClassDeadline || ev.Duration != time.Minute {
			t.Fatalf("terminal = %+v", ev)
		}
		// The same in the foreground.
		done := make(chan error, 1)
		started := make(chan struct{})
		go func() {
			_, err := h.s.Call(t.Context(), work.Spec{Owner: coord, Target: agent, Budget: work.Budget{MaxDuration: time.Hour},
				Run: func(ctx context.Context) (string, error) { close(started); <-ctx.Done(); return "", ctx.Err() }})
			done <- err
		}()
		<-started
		h.clk.BlockUntil(1)
		h.clk.Advance(time.Minute)
		var we *work.Error
		if err := <-done; !errors.As(err, &we) || we.Class != work.ClassDeadline {
			t.Fatalf("foreground: %v", err)
		}
	})
	t.Run("reached while cancel-requested is cancelled", func(t *testing.T) {
		h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: time.Minute}))
		ref, c := h.running(coord, agent)
		h.s.Cancel(t.Context(), coord, ref.ID)
		h.clk.Advance(time.Minute)
		c.returnCtxErr()
		if ev := h.obs.waitTerminal(ref.ID); ev.To != work.StateCancelled {
			t.Fatalf("terminal = %+v", ev)
		}
	})
	t.Run("deadline counts from running, not queued", func(t *testing.T) {
		h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: time.Minute}), work.WithMaxRunning(1))
		_, blocker := h.running(work.NewOwner("b"), fn)
		c := h.child()
		ref := h.start(coord, agent, c)
		h.clk.Advance(50 * time.Second)
		blocker.complete("")
		<-c.started
		h.clk.Advance(50 * time.Second) // 100s after creation, 50s after start
		if c.ctx.Err() != nil {
			t.Fatal("deadline counted from creation")
		}
		c.complete("ok")
		if ev := h.obs.waitTerminal(ref.ID); ev.To != work.StateCompleted || ev.Duration != 50*time.Second {
			t.Fatalf("terminal = %+v", ev)
		}
		running := h.obs.ofType(observe.EventRunning)
		if last := running[len(running)-1]; last.QueueWait != 50*time.Second {
			t.Fatalf("queue wait = %v", last.QueueWait)
		}
	})
	t.Run("none", func(t *testing.T) {
		h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
		ref, c := h.running(coord, agent)
		if h.clk.Pending() != 0 {
			t.Fatal("a deadline timer was set with MaxDuration 0")
		}
		c.complete("")
		h.obs.waitTerminal(ref.ID)
	})
}

func TestResultTooLarge(t *testing.T) {
	h := newHarness(t, work.WithMaxResultBytes(10))
	ref, c := h.running(coord, agent)
	c.complete(strings.Repeat("x", 11))
	ev := h.obs.waitTerminal(ref.ID)
	if ev.To != work.StateFailed || ev.ErrorClass != work.ClassResultTooLarge || ev.Bytes != 11 {
		t.Fatalf("terminal = %+v", ev)
	}
	st, out, err := h.s.Result(t.Context(), coord, ref.ID, 0)
	if err != nil || out != "" || st.ResultAvailable || st.State != work.StateFailed {
		t.Fatalf("result = %+v %q %v", st, out, err)
	}
	ref2, c2 := h.running(coord, agent)
	c2.complete(strings.Repeat("y", 10))
	if ev := h.obs.waitTerminal(ref2.ID); ev.To != work.StateCompleted || ev.Bytes != 10 {
		t.Fatalf("exact size: %+v", ev)
	}
	// A Spec override lowers the limit but cannot raise it above the
	// engine's.
	for _, tc := range []struct {
		override, size int
		want           observe.State
	}{
		{5, 6, work.StateFailed},       // lowered
		{5, 5, work.StateCompleted},    // lowered, exact
		{100, 50, work.StateFailed},    // clamped to 10
		{100, 10, work.StateCompleted}, // clamped, exact
	} {
		c3 := h.child()
		ref3, _ := h.s.Start(t.Context(), work.Spec{Owner: coord, Target: agent, Run: c3.run, MaxResultBytes: tc.override})
		<-c3.started
		c3.complete(strings.Repeat("z", tc.size))
		if ev := h.obs.waitTerminal(ref3.ID); ev.To != tc.want {
			t.Fatalf("override %d, %d bytes: %+v, want %s", tc.override, tc.size, ev, tc.want)
		}
	}
}

func TestDetachedExecutionContinues(t *testing.T) {
	h := newHarness(t)
	ref, c := h.running(coord, agent)
	if _, err := h.s.Detach(t.Context(), coord, ref.ID); err != nil {
		t.Fatal(err)
	}
	if c.ctx.Err() != nil {
		t.Fatal("detach cancelled the child")
	}
	if census(h.s)[work.StateRunning] != 1 {
		t.Fatalf("census = %v", census(h.s))
	}
	c.complete("late")
	if ev := h.obs.waitTerminal(ref.ID); ev.To != work.StateCompleted {
		t.Fatalf("terminal = %+v", ev)
	}
	if n := censusTotal(h.s); n != 0 {
		t.Fatalf("detached terminal work still counted: %v", census(h.s))
	}
	_, err := h.s.Status(t.Context(), coord, ref.ID)
	notFound(t, err)
}

func TestEventsCarryNoContent(t *testing.T) {
	h := newHarness(t, work.WithMaxResultBytes(1000))
	for _, end := range []func(c *child){
		func(c *child) { c.complete(canary) },
		func(c *child) { c.fail() },
		func(c *child) { c.panics() },
	} {
		ref, c := h.running(coord, agent)
		if _, err := h.s.Send(t.Context(), coord, ref.ID, canary, canary); err != nil {
			t.Fatal(err)
		}
		end(c)
		h.obs.waitTerminal(ref.ID)
		if _, out, _ := h.s.Result(t.Context(), coord, ref.ID, 0); out != "" && out != canary {
			t.Fatalf("output %q", out)
		}
		st := h.status(coord, ref.ID)
		if fmt.Sprintf("%+v", st) != strings.ReplaceAll(fmt.Sprintf("%+v", st), canary, "") {
			t.Fatal("canary in status")
		}
		if rows, _, _ := boundary.Rows(t.Context(), h.s, coord); strings.Contains(fmt.Sprintf("%+v", rows), canary) {
			t.Fatal("canary in rows")
		}
	}
	for _, e := range h.obs.rec.Events() {
		if strings.Contains(fmt.Sprintf("%#v", e), canary) {
			t.Fatalf("canary in event %#v", e)
		}
	}
	_, err := h.s.Send(t.Context(), coord, "nope", canary, canary)
	if err == nil || strings.Contains(err.Error(), canary) {
		t.Fatalf("err = %v", err)
	}
	if !errors.Is(err, work.ErrNotFound) {
		t.Fatal(err)
	}
}
