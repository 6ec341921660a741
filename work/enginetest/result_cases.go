package enginetest

import (
	"context"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
)

func (s *suite) resultWait(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "wait")
	ref, c := v.running(o, Func, "")
	// Zero does not wait.
	st, out, err := v.e.Result(v.ctx, o, ref.ID, 0)
	if err != nil || st.State != work.StateRunning || out != "" {
		t.Fatalf("Result(0) = %s %q %v", st.State, out, err)
	}
	if s.caps.ExactWaitClock {
		begin := time.Now()
		st, _, _ = v.e.Result(v.ctx, o, ref.ID, 150*time.Millisecond)
		if el := time.Since(begin); st.State != work.StateRunning || el < 150*time.Millisecond || el > 20*time.Second {
			t.Fatalf("Result(150ms) = %s after %v", st.State, el)
		}
	}
	// ctx ends the wait: Result returns the Status then, with no error.
	ctx, cancel := context.WithCancel(v.ctx)
	type res struct {
		st  work.Status
		err error
	}
	done := make(chan res, 1)
	go func() {
		st, _, err := v.e.Result(ctx, o, ref.ID, work.MaxResultWait)
		done <- res{st, err}
	}()
	time.Sleep(300 * time.Millisecond) // into the wait
	cancel()
	select {
	case r := <-done:
		if r.err != nil || r.st.Work.ID != ref.ID || r.st.State.Terminal() {
			t.Fatalf("Result after ctx = %s %s, %v; want the running Work's Status, nil error", r.st.Work.ID, r.st.State, r.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Result ignored its context")
	}
	// Settlement wakes a waiter, long before the timeout.
	got := make(chan string, 1)
	go func() {
		_, out, _ := v.e.Result(v.ctx, o, ref.ID, 10*time.Hour) // capped at MaxResultWait
		got <- out
	}()
	v.finish(c, "woken", nil)
	select {
	case out := <-got:
		if out != "woken" {
			// The waiter may have started after settlement: then it read at once.
			t.Fatalf("woken waiter got %q", out)
		}
	case <-time.After(work.MaxResultWait + 10*time.Second):
		t.Fatal("settlement did not wake the waiter")
	}
}
