package work_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
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
		state work.State
		out   string
	}{
		{"completed", func(h *harness, c *child, id string) { c.complete("done") }, work.StateCompleted, "done"},
		{"failed", func(h *harness, c *child, id string) { c.fail() }, work.StateFailed, ""},
		{"cancelled", func(h *harness, c *child, id string) {
			h.s.Cancel(coord, id)
			c.returnCtxErr()
		}, work.StateCancelled, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, work.WithMaxDuration(0)) // the only fake timer is the wait's
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
	h := newHarness(t, work.WithMaxDuration(0), work.WithMaxRunning(1))
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
		h := newHarness(t, work.WithMaxDuration(0))
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
			h := newHarness(t, work.WithMaxDuration(0))
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
		h := newHarness(t, work.WithMaxDuration(0))
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
		h := newHarness(t, work.WithMaxDuration(0))
		ref, c := h.running(coord, agent)
		ch := h.resultAsync(t.Context(), coord, ref.ID, 10*time.Second)
		h.clk.BlockUntil(1)
		h.s.Detach(coord, ref.ID)
		c.complete("x")
		notFound(t, recvWithin(t, ch).err)
	})
}

func TestResultTerminalAtOnce(t *testing.T) {
	h := newHarness(t, work.WithMaxDuration(0))
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
	if n := h.obs.count(work.EventResultRead); n != 1 {
		t.Fatalf("%d result-read events, want 1", n)
	}
}
