package work_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwork/agentwork/internal/fakeclock"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

type resultAnswer struct {
	st  work.Status
	out string
	err error
}

func (h *harness) resultAsync(ctx context.Context, o work.Owner, id string, timeout time.Duration) chan resultAnswer {
	ch := make(chan resultAnswer, 1)
	go func() {
		st, out, err := h.s.Result(ctx, o, id, timeout)
		ch <- resultAnswer{st, out, err}
	}()
	return ch
}

func recvWithin(t *testing.T, ch chan resultAnswer) resultAnswer {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(10 * time.Second):
		t.Fatal("Result did not return")
		return resultAnswer{}
	}
}

func TestResultWokenBySettlement(t *testing.T) {
	for _, tt := range []struct {
		name  string
		end   func(h *harness, c *child, id string)
		state observe.State
		out   string
	}{
		{"completed", func(h *harness, c *child, id string) { c.complete("done") }, work.StateCompleted, "done"},
		{"failed", func(h *harness, c *child, id string) { c.fail() }, work.StateFailed, ""},
		{"cancelled", func(h *harness, c *child, id string) {
			h.s.Cancel(t.Context(), coord, id)
			c.returnCtxErr()
		}, work.StateCancelled, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: -1})) // the only fake timer is the wait's
			ref, c := h.running(coord, agent)
			ch := h.resultAsync(t.Context(), coord, ref.ID, 20*time.Second)
			h.clk.BlockUntil(1) // Result is waiting
			tt.end(h, c, ref.ID)
			a := recvWithin(t, ch)
			if a.err != nil || a.st.State != tt.state || a.out != tt.out {
				t.Fatalf("result = %+v", a)
			}
			if h.clk.Pending() != 0 {
				t.Fatal("the wait's timer was not stopped")
			}
			if !h.clk.Now().Equal(t0) {
				t.Fatal("the clock moved")
			}
		})
	}
}

func TestResultWaitsForQueuedWork(t *testing.T) {
	h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: -1}), work.WithMaxRunning(1))
	_, blocker := h.running(work.NewOwner("b"), fn)
	c := h.child()
	ref := h.start(coord, agent, c)
	ch := h.resultAsync(t.Context(), coord, ref.ID, 0)
	if a := recvWithin(t, ch); a.err != nil || a.st.State != work.StateQueued {
		t.Fatalf("timeout 0: %+v", a)
	}
	ch = h.resultAsync(t.Context(), coord, ref.ID, time.Second)
	h.clk.BlockUntil(1)
	blocker.complete("")
	<-c.started
	c.complete("q")
	if a := recvWithin(t, ch); a.st.State != work.StateCompleted || a.out != "q" {
		t.Fatalf("result = %+v", a)
	}
}

func TestResultTimeout(t *testing.T) {
	t.Run("zero returns at once", func(t *testing.T) {
		h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
		ref, _ := h.running(coord, agent)
		st, out, err := h.s.Result(t.Context(), coord, ref.ID, 0)
		if err != nil || st.State != work.StateRunning || out != "" || h.clk.Pending() != 0 {
			t.Fatalf("result = %+v %q %v", st, out, err)
		}
	})
	for _, tt := range []struct {
		name    string
		timeout time.Duration
		want    time.Duration
	}{
		{"short", 2 * time.Second, 2 * time.Second},
		{"exactly 30s", 30 * time.Second, 30 * time.Second},
		{"capped at 30s", time.Hour, 30 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
			ref, _ := h.running(coord, agent)
			ch := h.resultAsync(t.Context(), coord, ref.ID, tt.timeout)
			h.clk.BlockUntil(1)
			h.clk.Advance(tt.want - time.Millisecond)
			if h.clk.Pending() != 1 {
				t.Fatal("wait ended early")
			}
			h.clk.Advance(time.Millisecond)
			a := recvWithin(t, ch)
			if a.err != nil || a.st.State != work.StateRunning || a.out != "" {
				t.Fatalf("result = %+v", a)
			}
		})
	}
	t.Run("negative", func(t *testing.T) {
		h := newHarness(t)
		ref, _ := h.running(coord, agent)
		_, _, err := h.s.Result(t.Context(), coord, ref.ID, -time.Nanosecond)
		if !errors.Is(err, work.ErrInvalidTimeout) {
			t.Fatalf("err = %v", err)
		}
		wantCode(t, err, "invalid_timeout")
	})
	t.Run("context ends the wait", func(t *testing.T) {
		h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
		ref, _ := h.running(coord, agent)
		ctx, cancel := context.WithCancel(t.Context())
		ch := h.resultAsync(ctx, coord, ref.ID, 10*time.Second)
		h.clk.BlockUntil(1)
		cancel()
		if a := recvWithin(t, ch); a.err != nil || a.st.State != work.StateRunning {
			t.Fatalf("result = %+v", a)
		}
		if h.clk.Pending() != 0 {
			t.Fatal("timer left")
		}
	})
	t.Run("detached while waiting", func(t *testing.T) {
		h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
		ref, c := h.running(coord, agent)
		ch := h.resultAsync(t.Context(), coord, ref.ID, 10*time.Second)
		h.clk.BlockUntil(1)
		h.s.Detach(t.Context(), coord, ref.ID)
		c.complete("x")
		notFound(t, recvWithin(t, ch).err)
	})
}

func TestResultTerminalAtOnce(t *testing.T) {
	h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	ref, c := h.running(coord, agent)
	c.fail()
	h.obs.waitTerminal(ref.ID)
	st, out, err := h.s.Result(t.Context(), coord, ref.ID, 30*time.Second)
	if err != nil || st.State != work.StateFailed || out != "" || h.clk.Pending() != 0 {
		t.Fatalf("result = %+v %q %v", st, out, err)
	}
}

func TestResultReadEvent(t *testing.T) {
	h := newHarness(t)
	ref, c := h.running(coord, agent)
	c.complete("")
	h.obs.waitTerminal(ref.ID)
	for range 3 {
		st, out, err := h.s.Result(t.Context(), coord, ref.ID, 0)
		if err != nil || out != "" || st.State != work.StateCompleted || !st.ResultAvailable {
			t.Fatalf("result = %+v %q %v", st, out, err)
		}
	}
	if n := h.obs.count(observe.EventResultRead); n != 1 {
		t.Fatalf("%d result-read events, want 1", n)
	}
}

// A Result must not return a terminal answer before the Observer has seen
// the terminal event and the owner's Subscription has its notice, on each
// of its paths: the Work already terminal when Result looks (with no wait
// and with one: the emit-lock check), and Result waiting as it settles
// (its waiter's token comes after the delivery).
func TestResultNotAheadOfDelivery(t *testing.T) {
	for _, how := range []string{"terminal/no-wait", "terminal/wait", "waiting"} {
		t.Run(how, func(t *testing.T) {
			x := startGated(t)
			clk, g, s, o, ref, proceed := x.clk, x.g, x.s, x.o, x.ref, x.proceed
			sub, err := s.Subscribe(t.Context(), o, 1) // before the child can end: it waits for proceed
			if err != nil {
				t.Fatal(err)
			}
			type answer struct {
				st        observe.State
				delivered bool
				noticed   bool
			}
			res := make(chan answer, 1)
			result := func(timeout time.Duration) {
				st, _, _ := s.Result(context.Background(), o, ref.ID, timeout)
				a := answer{st: st.State, delivered: g.delivered.Load()}
				select {
				case <-sub.C():
					a.noticed = true
				default:
				}
				res <- a
			}
			switch how {
			case "waiting":
				go result(10 * time.Second)
				clk.BlockUntil(1) // Result waits (its timer is the only one)
				close(proceed)
				<-g.entered
			default:
				close(proceed)
				<-g.entered // terminal; the failed event is being delivered
				timeout := time.Duration(0)
				if how == "terminal/wait" {
					timeout = 10 * time.Second
				}
				go result(timeout)
			}
			var a answer
			select {
			case a = <-res:
				close(g.release)
			case <-time.After(100 * time.Millisecond): // Result rightly still waits
				close(g.release)
				a = <-res
			}
			if a.st != work.StateFailed {
				t.Fatalf("Result = %s", a.st)
			}
			if !a.delivered {
				t.Fatal("Result reported failed before the Observer saw the terminal event")
			}
			if !a.noticed {
				t.Fatal("Result reported failed before the Subscription had its notice")
			}
		})
	}
}

// gateObs holds the delivery of a Work's failed event until released.
type gateObs struct {
	observe.NopObserver
	entered   chan struct{}
	release   chan struct{}
	delivered atomic.Bool
}

func (g *gateObs) Event(_ context.Context, e observe.Event) {
	if e.Type == observe.EventFailed {
		close(g.entered)
		<-g.release
		g.delivered.Store(true)
	}
}

// gated is an engine on a fake clock whose Observer is a gateObs, with
// one Work of owner "a" whose child fails once proceed is closed.
type gated struct {
	clk     *fakeclock.Clock
	g       *gateObs
	s       *work.Engine
	o       work.Owner
	ref     work.Ref
	proceed chan struct{}
}

// startGated starts a gated Work; the engine closes when t ends.
func startGated(t *testing.T) *gated {
	t.Helper()
	x := &gated{clk: fakeclock.New(t0), g: &gateObs{entered: make(chan struct{}), release: make(chan struct{})},
		o: work.NewOwner("a"), proceed: make(chan struct{})}
	x.s = work.New(work.WithClock(x.clk), work.WithObserver(x.g), work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	t.Cleanup(func() { x.s.Close(context.Background()) })
	var err error
	x.ref, err = x.s.Start(context.Background(), work.Spec{Owner: x.o, Target: fn,
		Run: func(context.Context) (string, error) { <-x.proceed; return "", errBoom }})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// A Result whose wait ends (by its timeout or its context) while the Work
// it waits for is settling must not report the terminal state before the
// Observer has seen the terminal event.
func TestResultWaitEndsWhileSettling(t *testing.T) {
	for _, how := range []string{"timeout", "ctx"} {
		t.Run(how, func(t *testing.T) {
			x := startGated(t)
			clk, g, s, o, ref, proceed := x.clk, x.g, x.s, x.o, x.ref, x.proceed
			type answer struct {
				st        observe.State
				delivered bool
			}
			res := make(chan answer, 1)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				st, _, _ := s.Result(ctx, o, ref.ID, 10*time.Second)
				res <- answer{st.State, g.delivered.Load()}
			}()
			clk.BlockUntil(1) // Result waits (its timer is the only one)
			close(proceed)
			<-g.entered // settled; the failed event is being delivered
			if how == "timeout" {
				clk.Advance(10 * time.Second)
			} else {
				cancel()
			}
			var a answer
			select {
			case a = <-res:
			case <-time.After(300 * time.Millisecond): // Result rightly still waits
				close(g.release)
				a = <-res
				g.release = nil
			}
			if g.release != nil {
				close(g.release)
			}
			if a.st.Terminal() && !a.delivered {
				t.Fatalf("Result reported %s before the Observer saw the terminal event", a.st)
			}
		})
	}
}

// gateObserver blocks delivery of EventFailed until released.
type gateObserver struct {
	observe.NopObserver
	entered chan struct{}
	release chan struct{}
}

func (g *gateObserver) Event(_ context.Context, e observe.Event) {
	if e.Type == observe.EventFailed {
		close(g.entered)
		<-g.release
	}
}

// TestResultNeverAheadOfObserver: a Result waiting for settlement returns
// only after the observer has been given the terminal event. The observer
// is held inside that event; during the hold (a bounded window in which a
// premature wake-up would show) Result must not return.
func TestResultNeverAheadOfObserver(t *testing.T) {
	g := &gateObserver{entered: make(chan struct{}), release: make(chan struct{})}
	s := work.New(work.WithObserver(g))
	var once sync.Once
	open := func() { once.Do(func() { close(g.release) }) }
	defer s.Close(context.Background())
	defer open() // never leave the worker held, even when failing
	owner := work.NewOwner("coord")
	finish := make(chan struct{})
	ref, err := s.Start(context.Background(), work.Spec{Owner: owner, Target: work.Target{Label: "x", Kind: work.KindFunction},
		Run: func(context.Context) (string, error) { <-finish; return "", errors.New("boom") }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan observe.State, 1)
	go func() {
		st, _, _ := s.Result(context.Background(), owner, ref.ID, work.MaxResultWait)
		done <- st.State
	}()
	close(finish)
	<-g.entered
	select {
	case st := <-done:
		t.Fatalf("Result returned %s while the observer was still being told", st)
	case <-time.After(50 * time.Millisecond):
	}
	open()
	if st := <-done; st != work.StateFailed {
		t.Fatalf("Result state = %s", st)
	}
}

// TestTerminalResultNeverAheadOfObserver: a Result that arrives after the
// Work became terminal but while its terminal event is still being
// delivered (the Work has no waiter: nobody waited) returns only
// after the observer has been given the event.
func TestTerminalResultNeverAheadOfObserver(t *testing.T) {
	g := &gateObserver{entered: make(chan struct{}), release: make(chan struct{})}
	s := work.New(work.WithObserver(g))
	var once sync.Once
	open := func() { once.Do(func() { close(g.release) }) }
	defer s.Close(context.Background())
	defer open()
	owner := work.NewOwner("coord")
	ref, err := s.Start(context.Background(), work.Spec{Owner: owner, Target: work.Target{Label: "x", Kind: work.KindFunction},
		Run: func(context.Context) (string, error) { return "", errors.New("boom") }})
	if err != nil {
		t.Fatal(err)
	}
	<-g.entered // terminal, its event held in delivery
	done := make(chan observe.State, 1)
	go func() {
		st, _, _ := s.Result(context.Background(), owner, ref.ID, work.MaxResultWait)
		done <- st.State
	}()
	select {
	case st := <-done:
		t.Fatalf("Result returned %s while the observer was still being told", st)
	case <-time.After(50 * time.Millisecond):
	}
	open()
	if st := <-done; st != work.StateFailed {
		t.Fatalf("Result state = %s", st)
	}
}
