package work_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

func TestSendFIFODelivery(t *testing.T) {
	h := newHarness(t)
	ref, c := h.running(coord, agent)
	for i := 1; i <= 3; i++ {
		r, err := h.s.Send(t.Context(), coord, ref.ID, fmt.Sprintf("call-%d", i), fmt.Sprintf("msg %d", i))
		if err != nil {
			t.Fatal(err)
		}
		if r.Cursor != fmt.Sprint(i) || r.ID != ref.ID+"."+fmt.Sprint(i) || r.WorkID != ref.ID {
			t.Fatalf("receipt %d = %+v", i, r)
		}
	}
	if got := boundary.Guidance(c.ex); fmt.Sprint(got) != "[msg 1 msg 2 msg 3]" {
		t.Fatalf("drained %q", got)
	}
	if got := boundary.Guidance(c.ex); got != nil {
		t.Fatalf("second drain %q", got)
	}
	h.s.Send(t.Context(), coord, ref.ID, "call-4", "msg 4")
	if got := boundary.Guidance(c.ex); fmt.Sprint(got) != "[msg 4]" {
		t.Fatalf("drained %q", got)
	}
	if c.ex.WorkID() != ref.ID {
		t.Fatal("WorkID")
	}
	evs := h.obs.events(ref.ID)
	var acc, del int
	for _, e := range evs {
		switch e.Type {
		case observe.EventGuidanceAccepted:
			acc += e.Count
		case observe.EventGuidanceDelivered:
			del += e.Count
		}
	}
	if acc != 4 || del != 4 {
		t.Fatalf("accepted %d delivered %d", acc, del)
	}
}

func TestSendToQueuedWorkIsDeliveredWhenItRuns(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(1))
	_, blocker := h.running(work.NewOwner("b"), fn)
	c := h.child()
	ref := h.start(coord, agent, c)
	if _, err := h.s.Send(t.Context(), coord, ref.ID, "x", "first"); err != nil {
		t.Fatal(err)
	}
	blocker.complete("")
	<-c.started
	if got := boundary.Guidance(c.ex); fmt.Sprint(got) != "[first]" {
		t.Fatalf("drained %q", got)
	}
}

func TestSendIdempotentPerCommandID(t *testing.T) {
	h := newHarness(t)
	ref, c := h.running(coord, agent)
	r1, err := h.s.Send(t.Context(), coord, ref.ID, "call-1", "hello")
	if err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(5)
	r2, err := h.s.Send(t.Context(), coord, ref.ID, "call-1", "hello")
	if err != nil || r2 != r1 {
		t.Fatalf("replay = %+v %v, want %+v", r2, err, r1)
	}
	_, err = h.s.Send(t.Context(), coord, ref.ID, "call-1", "hello!")
	if !errors.Is(err, work.ErrConflict) {
		t.Fatalf("err = %v", err)
	}
	wantCode(t, err, "conflict")
	// No command id: never deduplicated.
	h.s.Send(t.Context(), coord, ref.ID, "", "hello")
	h.s.Send(t.Context(), coord, ref.ID, "", "hello")
	if got := boundary.Guidance(c.ex); fmt.Sprint(got) != "[hello hello hello]" {
		t.Fatalf("drained %q", got)
	}
	if n := h.obs.count(observe.EventGuidanceAccepted); n != 3 {
		t.Fatalf("%d accepted events", n)
	}
	// A replay after the Work ended still returns the first receipt.
	c.complete("")
	h.obs.waitTerminal(ref.ID)
	if r3, err := h.s.Send(t.Context(), coord, ref.ID, "call-1", "hello"); err != nil || r3 != r1 {
		t.Fatalf("replay after end = %+v %v", r3, err)
	}
	if _, err := h.s.Send(t.Context(), coord, ref.ID, "call-9", "new"); !errors.Is(err, work.ErrTerminal) {
		t.Fatalf("err = %v", err)
	}
}

func TestSendRefusals(t *testing.T) {
	h := newHarness(t)
	fref, _ := h.running(coord, fn)
	_, err := h.s.Send(t.Context(), coord, fref.ID, "c", "hi")
	if !errors.Is(err, work.ErrNotAgent) {
		t.Fatalf("function child: %v", err)
	}
	wantCode(t, err, "not_agent")
	aref, c := h.running(coord, agent)
	for _, m := range []string{"", " ", "\n\t"} {
		_, err := h.s.Send(t.Context(), coord, aref.ID, "c", m)
		if !errors.Is(err, work.ErrEmptyMessage) {
			t.Fatalf("message %q: %v", m, err)
		}
	}
	c.complete("")
	h.obs.waitTerminal(aref.ID)
	_, err = h.s.Send(t.Context(), coord, aref.ID, "c", "late")
	wantCode(t, err, "terminal")
	if n := h.obs.count(observe.EventGuidanceAccepted); n != 0 {
		t.Fatalf("%d accepted", n)
	}
}

func TestUndeliveredGuidanceDroppedAtEnd(t *testing.T) {
	h := newHarness(t)
	ref, c := h.running(coord, agent)
	h.s.Send(t.Context(), coord, ref.ID, "a", "one")
	h.s.Send(t.Context(), coord, ref.ID, "b", "two")
	c.complete("")
	h.obs.waitTerminal(ref.ID)
	evs := h.obs.ofType(observe.EventGuidanceDropped)
	if len(evs) != 1 || evs[0].Count != 2 {
		t.Fatalf("dropped = %+v", evs)
	}
	// The drop comes just before the terminal event, while the execution
	// is still open for observers.
	all := h.obs.events(ref.ID)
	if n := len(all); n < 2 || all[n-2].Type != observe.EventGuidanceDropped || all[n-1].Type != observe.EventCompleted {
		t.Fatalf("event order = %+v, want ... guidance-dropped, completed", all)
	}
	if got := boundary.Guidance(c.ex); got != nil {
		t.Fatalf("drain after end = %q", got)
	}
}
