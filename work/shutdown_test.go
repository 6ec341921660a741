package work_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwork/agentwork/internal/fakeclock"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// signalClock is the fake clock, plus a one-shot signal on the first Now
// after arm: Shutdown reads the clock once it refuses new starts.
type signalClock struct {
	*fakeclock.Clock
	armed atomic.Bool
	ch    chan struct{}
}

func (c *signalClock) arm() chan struct{} {
	c.ch = make(chan struct{})
	c.armed.Store(true)
	return c.ch
}

func (c *signalClock) Now() time.Time {
	if c.armed.CompareAndSwap(true, false) {
		close(c.ch)
	}
	return c.Clock.Now()
}

// shutdownHarness is a harness whose clock signals Shutdown's start.
func shutdownHarness(t *testing.T, opts ...work.Option) (*harness, *signalClock) {
	t.Helper()
	h := &harness{t: t, clk: fakeclock.New(t0), obs: newObs(), kill: make(chan struct{})}
	clk := &signalClock{Clock: h.clk}
	h.s = work.New(append([]work.Option{work.WithClock(clk), work.WithObserver(h.obs), work.WithDefaultBudget(work.Budget{MaxDuration: -1})}, opts...)...)
	t.Cleanup(func() {
		close(h.kill)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h, clk
}

// TestShutdownDrains: Shutdown refuses new starts and new top-level calls
// at once, lets running and queued Work (and a running child's own calls)
// finish, and reports them; nothing is cancelled.
func TestShutdownDrains(t *testing.T) {
	h, clk := shutdownHarness(t, work.WithMaxRunning(1))
	o := work.NewOwner("coord")
	sub, _ := h.s.Subscribe(t.Context(), o, 0)
	r1, c1 := h.running(o, agent)
	c2 := h.child()
	r2 := h.start(o, fn, c2) // queued behind c1

	began := clk.arm()
	done := make(chan observe.ShutdownReport)
	go func() { rep, _ := h.s.Shutdown(context.Background()); done <- rep }()
	<-began
	if _, err := h.s.Start(context.Background(), work.Spec{Owner: o, Target: fn, Run: immediate("x")}); err == nil {
		t.Fatal("Start during Shutdown succeeded")
	} else {
		wantCode(t, err, "closed")
	}
	if _, err := h.s.Call(context.Background(), work.Spec{Owner: o, Target: fn, Run: immediate("x")}); err == nil {
		t.Fatal("a top-level Call during Shutdown succeeded")
	} else {
		wantCode(t, err, "closed")
	}
	// The running child's own foreground call goes on.
	c1.do(func(ctx context.Context) (string, error) {
		return h.s.Call(ctx, work.Spec{Owner: c1.ex.Scope(), Target: fn, Run: immediate("inner")})
	})
	<-c2.started
	h.clk.Advance(3 * time.Second)
	c2.complete("second")
	rep := <-done
	if !rep.Drained || rep.OrphanCount() != 0 || rep.Duration != 3*time.Second {
		t.Fatalf("report = %v", rep)
	}
	want := []observe.ShutdownCount{{Target: fn.Label, State: work.StateCompleted, Count: 1}, {Target: agent.Label, State: work.StateCompleted, Count: 1}}
	if len(rep.Settled) != 2 || rep.Settled[0] != want[0] || rep.Settled[1] != want[1] {
		t.Fatalf("settled = %+v, want %+v", rep.Settled, want)
	}
	if _, out, _ := h.s.Result(context.Background(), o, r1.ID, 0); out != "inner" {
		t.Fatalf("r1 output = %q", out)
	}
	if st := h.status(o, r2.ID); st.State != work.StateCompleted {
		t.Fatalf("queued Work ended %s", st.State)
	}
	// Both notices arrived, then the channel closed.
	for range 2 {
		if _, ok := <-sub.C(); !ok {
			t.Fatal("subscription closed before its notices")
		}
	}
	if _, ok := <-sub.C(); ok {
		t.Fatal("subscription still open after Shutdown")
	}
}

// TestShutdownOrphans: when ctx ends, Shutdown cancels what is left,
// waits the grace, and reports the children that ignored cancellation as
// orphans (EventOrphaned, in the report and its log value); the others end
// cancelled.
func TestShutdownOrphans(t *testing.T) {
	h, clk := shutdownHarness(t, work.WithMaxRunning(2), work.WithShutdownGrace(2*time.Second))
	o := work.NewOwner("coord")
	politeRef, polite := h.running(o, agent)
	stubbornRef, stubborn := h.running(o, fn)
	queued := h.child()
	queuedRef := h.start(o, fn, queued)

	ctx, cancel := context.WithCancel(context.Background())
	began := clk.arm()
	done := make(chan observe.ShutdownReport)
	go func() { rep, _ := h.s.Shutdown(ctx); done <- rep }()
	<-began
	cancel()
	polite.returnCtxErr()
	// stubborn ignores its cancellation: Shutdown waits the grace.
	h.clk.BlockUntil(1)
	h.obs.waitTerminal(politeRef.ID)
	h.clk.Advance(2 * time.Second)
	rep := <-done
	if rep.Drained {
		t.Fatal("report says drained")
	}
	wantSettled := []observe.ShutdownCount{{Target: fn.Label, State: work.StateCancelled, Count: 1}, {Target: agent.Label, State: work.StateCancelled, Count: 1}}
	if len(rep.Settled) != 2 || rep.Settled[0] != wantSettled[0] || rep.Settled[1] != wantSettled[1] {
		t.Fatalf("settled = %+v, want %+v", rep.Settled, wantSettled)
	}
	wantOrphan := observe.ShutdownCount{Target: fn.Label, State: work.StateCancelRequested, Count: 1}
	if len(rep.Orphaned) != 1 || rep.Orphaned[0] != wantOrphan || rep.OrphanCount() != 1 {
		t.Fatalf("orphaned = %+v", rep.Orphaned)
	}
	if st := h.status(o, queuedRef.ID); st.State != work.StateCancelled {
		t.Fatalf("queued Work %s", st.State)
	}
	evs := h.obs.ofType(observe.EventOrphaned)
	if len(evs) != 1 || evs[0].WorkID != stubbornRef.ID || evs[0].From != work.StateCancelRequested {
		t.Fatalf("orphan events = %+v", evs)
	}
	// The report is content-free, as a string and as a log value.
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("shutdown", "report", rep)
	for _, s := range []string{rep.String(), buf.String()} {
		if strings.Contains(s, stubbornRef.ID) || strings.Contains(s, canary) || strings.Contains(s, "coord") {
			t.Fatalf("report carries an id or content: %s", s)
		}
	}
	if !strings.Contains(buf.String(), `"orphans":1`) || !strings.Contains(buf.String(), `"fetch/cancel-requested":1`) {
		t.Fatalf("log line = %s", buf.String())
	}
	if got := rep.String(); got != "drained=false duration=2s settled=[fetch/cancelled=1 research/cancelled=1] orphaned=[fetch/cancel-requested=1]" {
		t.Fatalf("String() = %s", got)
	}
	stubborn.complete("late") // the orphan's goroutine ends when it returns
	h.obs.waitTerminal(stubbornRef.ID)
}

// TestShutdownIdle: an idle engine shuts down at once, drained, and
// Shutdown after Close or twice reports nothing.
func TestShutdownIdle(t *testing.T) {
	h := newHarness(t)
	rep, err := h.s.Shutdown(context.Background())
	if err != nil || !rep.Drained || len(rep.Settled) != 0 || len(rep.Orphaned) != 0 {
		t.Fatalf("report = %v", rep)
	}
	if rep, _ := h.s.Shutdown(context.Background()); !rep.Drained {
		t.Fatalf("second report = %v", rep)
	}
	if _, err := h.s.Start(context.Background(), work.Spec{Owner: work.NewOwner("o"), Target: fn, Run: immediate("x")}); err == nil {
		t.Fatal("Start after Shutdown succeeded")
	}
}

// TestShutdownFromChild: a child cannot shut its own engine down (it
// would wait for itself); nothing changes.
func TestShutdownFromChild(t *testing.T) {
	h := newHarness(t)
	o := work.NewOwner("o")
	ref, c := h.running(o, fn)
	c.do(func(ctx context.Context) (string, error) {
		if _, err := h.s.Shutdown(ctx); err == nil {
			return "", errors.New("Shutdown from a child succeeded")
		}
		return "ok", nil
	})
	if st, out, _ := h.s.Result(context.Background(), o, ref.ID, work.MaxResultWait); st.State != work.StateCompleted || out != "ok" {
		t.Fatalf("child: %s %q", st.State, out)
	}
	if _, err := h.s.Start(context.Background(), work.Spec{Owner: o, Target: fn, Run: immediate("x")}); err != nil {
		t.Fatalf("the engine stopped admitting: %v", err)
	}
}
