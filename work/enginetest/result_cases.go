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

// resultReadMark: the Status Result returns carries ResultRead as it was
// before this read: false on the first read of a completed Work's output,
// whether Result found it settled or waited for it, and true afterwards
// (in Status and in later reads).
func (s *suite) resultReadMark(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "readmark")
	check := func(what string, st work.Status, out string, err error, wantOut string, wantRead bool) {
		t.Helper()
		if err != nil || st.State != work.StateCompleted || !st.ResultAvailable || out != wantOut {
			t.Fatalf("%s = %s available %v %q, %v; want completed, available, %q", what, st.State, st.ResultAvailable, out, err, wantOut)
		}
		if st.ResultRead != wantRead {
			t.Fatalf("%s: ResultRead = %v, want %v", what, st.ResultRead, wantRead)
		}
	}
	// Settled before the read.
	ref := v.start(o, Echo, "read me")
	v.eventually("the Work settles", func() bool {
		st, err := v.e.Status(v.ctx, o, ref.ID)
		return err == nil && st.State.Terminal()
	})
	if st := v.status(o, ref.ID); st.ResultRead {
		t.Fatal("Status before any Result: ResultRead = true")
	}
	st, out, err := v.e.Result(v.ctx, o, ref.ID, 0)
	check("the first Result", st, out, err, "read me", false)
	check("Status after it", v.status(o, ref.ID), "", nil, "", true)
	st, out, err = v.e.Result(v.ctx, o, ref.ID, 0)
	check("the second Result", st, out, err, "read me", true)
	// Settled while Result waited (or before it began: either way the
	// first read).
	waited, c := v.running(o, Func, "")
	type res struct {
		st  work.Status
		out string
		err error
	}
	got := make(chan res, 1)
	go func() {
		st, out, err := v.e.Result(v.ctx, o, waited.ID, work.MaxResultWait)
		got <- res{st, out, err}
	}()
	v.finish(c, "waited", nil)
	select {
	case r := <-got:
		check("the first Result (waiting)", r.st, r.out, r.err, "waited", false)
	case <-time.After(work.MaxResultWait + 10*time.Second):
		t.Fatal("settlement did not wake the waiter")
	}
	st, out, err = v.e.Result(v.ctx, o, waited.ID, 0)
	check("the second Result (waiting)", st, out, err, "waited", true)
}
