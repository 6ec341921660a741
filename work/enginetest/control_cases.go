package enginetest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/work"
)

func (s *suite) cancelQueued(t *testing.T) {
	v := s.env(t, func(c *Config) { c.MaxRunning = 1 })
	o := owner(t, "cq")
	_, c1 := v.running(o, Func, "")
	token, c2 := newControl(t, "")
	ref := v.start(o, Func, token)
	if st := v.status(o, ref.ID); st.State != work.StateQueued || !st.StartedAt.IsZero() {
		t.Fatalf("second Work with one slot: %+v, want queued", st)
	}
	r, err := v.e.Cancel(t.Context(), o, ref.ID)
	if err != nil || !r.Accepted || r.State != work.StateCancelled || r.WorkID != ref.ID || r.AcceptedAt.IsZero() {
		t.Fatalf("Cancel(queued) = %+v, %v", r, err)
	}
	st, _ := v.settle(o, ref.ID)
	if st.State != work.StateCancelled {
		t.Fatalf("queued cancel ended %s", st.State)
	}
	v.finish(c1, "", nil)
	// It never ran: a later Work takes the slot and the cancelled one stays so.
	v.settle(o, v.start(o, Echo, "next").ID)
	if n := c2.runs.Load(); n != 0 {
		t.Fatalf("a Work cancelled while queued ran %d times", n)
	}
}

func (s *suite) cancelRunning(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "cr")
	ref, c := v.running(o, Agent, "")
	r, err := v.e.Cancel(t.Context(), o, ref.ID)
	if err != nil || !r.Accepted || r.State != work.StateCancelRequested {
		t.Fatalf("Cancel(running) = %+v, %v", r, err)
	}
	if err := <-c.ended; err == nil {
		t.Fatal("the child's context was not cancelled")
	}
	st, _ := v.settle(o, ref.ID)
	if st.State != work.StateCancelled || st.ResultAvailable {
		t.Fatalf("cancelled child: %+v", st)
	}
	r, err = v.e.Cancel(t.Context(), o, ref.ID)
	if err != nil || r.Accepted || r.State != work.StateCancelled {
		t.Fatalf("Cancel(cancelled) = %+v, %v", r, err)
	}
}

func (s *suite) cancelLosesToCompletion(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "race")
	ref, c := v.running(o, Func, "complete")
	r1, err1 := v.e.Cancel(t.Context(), o, ref.ID)
	// The child does not return before the test finishes it: a repeated
	// cancel lands on cancel-requested Work, accepted, no change.
	r2, err2 := v.e.Cancel(t.Context(), o, ref.ID)
	if err1 != nil || err2 != nil || !r1.Accepted || !r2.Accepted ||
		r1.State != work.StateCancelRequested || r2.State != work.StateCancelRequested {
		t.Fatalf("cancels = %+v %v, %+v %v; want both accepted, cancel-requested", r1, err1, r2, err2)
	}
	if err := <-c.ended; err == nil {
		t.Fatal("the child's context was not cancelled")
	}
	v.finish(c, "finished anyway", nil) // the completion wins the race
	st, out := v.settle(o, ref.ID)
	if st.State != work.StateCompleted || out != "finished anyway" {
		t.Fatalf("completion after cancel: %s %q, want completed", st.State, out)
	}
	// A cancel after the completion: terminal Work, not accepted.
	r3, err3 := v.e.Cancel(t.Context(), o, ref.ID)
	if err3 != nil || r3.Accepted || r3.State != work.StateCompleted {
		t.Fatalf("cancel after completion = %+v, %v; want not accepted, completed", r3, err3)
	}
}

func (s *suite) cancelUnrelatedFailure(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "fail")
	ref, _ := v.running(o, Func, "fail")
	if _, err := v.e.Cancel(t.Context(), o, ref.ID); err != nil {
		t.Fatal(err)
	}
	if st, _ := v.settle(o, ref.ID); st.State != work.StateFailed {
		t.Fatalf("an unrelated failure after cancel: %s, want failed", st.State)
	}
}

func (s *suite) cancelTerminal(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "ct")
	ref := v.start(o, Echo, "x")
	v.settle(o, ref.ID)
	r, err := v.e.Cancel(t.Context(), o, ref.ID)
	if err != nil || r.Accepted || r.State != work.StateCompleted {
		t.Fatalf("Cancel(completed) = %+v, %v", r, err)
	}
	b, _ := json.Marshal(r)
	if !strings.HasPrefix(string(b), `{"workId":"`+ref.ID+`","accepted":false,"state":"completed","acceptedAt":"`) {
		t.Fatalf("cancel receipt JSON = %s", b)
	}
}

func (s *suite) detach(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "d")
	ref, c := v.running(o, Agent, "")
	r, err := v.e.Detach(t.Context(), o, ref.ID)
	if err != nil || r.ID != ref.ID {
		t.Fatalf("Detach = %+v, %v", r, err)
	}
	b, _ := json.Marshal(r)
	if string(b) != `{"id":"`+ref.ID+`","detached":true}` {
		t.Fatalf("detach JSON = %s", b)
	}
	_, err = v.e.Status(t.Context(), o, ref.ID)
	wantErr(t, "Status after Detach", err, work.ErrNotFound)
	_, _, err = v.e.Result(v.ctx, o, ref.ID, 0)
	wantErr(t, "Result after Detach", err, work.ErrNotFound)
	_, err = v.e.Detach(t.Context(), o, ref.ID)
	wantErr(t, "second Detach", err, work.ErrNotFound)
	if l, _ := v.e.List(t.Context(), o); len(l) != 0 {
		t.Fatalf("List after Detach has %d Works", len(l))
	}
	// Execution continues: the child was not cancelled.
	v.finish(c, "detached result", nil)
	if err := <-c.ended; err != nil {
		t.Fatalf("the detached child's context ended: %v", err)
	}
}

func (s *suite) release(t *testing.T) {
	v := s.env(t, func(c *Config) { c.MaxRunning = 1 })
	o := owner(t, "rel")
	ref, c := v.running(o, Func, "")
	queued := v.start(o, Echo, "never")
	if err := v.e.Release(t.Context(), o); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := <-c.ended; err == nil {
		t.Fatal("Release did not cancel the running child")
	}
	for _, id := range []string{ref.ID, queued.ID} {
		_, err := v.e.Status(t.Context(), o, id)
		wantErr(t, "Status after Release", err, work.ErrNotFound)
	}
	if l, err := v.e.List(t.Context(), o); err != nil || len(l) != 0 {
		t.Fatalf("List after Release = %d, %v", len(l), err)
	}
}
