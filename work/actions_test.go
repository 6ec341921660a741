package work_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// stateCase prepares one Work in a given state, seen from owner "coord".
type stateCase struct {
	name           string
	setup          func(h *harness, o work.Owner) string // returns the id to query
	visible        bool
	state          observe.State
	result         bool // Result returns the output "out"
	cancelAccepted bool
	cancelState    observe.State
	finished       bool
	startedAt      bool
}

var coord = work.NewOwner("coord")

func stateCases() []stateCase {
	return []stateCase{
		{name: "queued", visible: true, state: work.StateQueued, cancelAccepted: true, cancelState: work.StateCancelled,
			setup: func(h *harness, o work.Owner) string {
				h.running(work.NewOwner("blocker"), fn) // MaxRunning is 1 in these tests
				return h.start(o, agent, h.child()).ID
			}},
		{name: "running", visible: true, state: work.StateRunning, cancelAccepted: true, cancelState: work.StateCancelRequested, startedAt: true,
			setup: func(h *harness, o work.Owner) string {
				ref, _ := h.running(o, agent)
				return ref.ID
			}},
		{name: "cancel-requested", visible: true, state: work.StateCancelRequested, cancelAccepted: true, cancelState: work.StateCancelRequested, startedAt: true,
			setup: func(h *harness, o work.Owner) string {
				ref, _ := h.running(o, agent)
				if r, err := h.s.Cancel(context.Background(), o, ref.ID); err != nil || r.State != work.StateCancelRequested {
					h.t.Fatalf("Cancel: %+v %v", r, err)
				}
				return ref.ID
			}},
		{name: "completed", visible: true, state: work.StateCompleted, result: true, cancelState: work.StateCompleted, finished: true, startedAt: true,
			setup: func(h *harness, o work.Owner) string {
				ref, c := h.running(o, agent)
				c.complete("out")
				h.obs.waitTerminal(ref.ID)
				return ref.ID
			}},
		{name: "failed", visible: true, state: work.StateFailed, cancelState: work.StateFailed, finished: true, startedAt: true,
			setup: func(h *harness, o work.Owner) string {
				ref, c := h.running(o, agent)
				c.fail()
				h.obs.waitTerminal(ref.ID)
				return ref.ID
			}},
		{name: "cancelled", visible: true, state: work.StateCancelled, cancelState: work.StateCancelled, finished: true, startedAt: true,
			setup: func(h *harness, o work.Owner) string {
				ref, c := h.running(o, agent)
				if _, err := h.s.Cancel(context.Background(), o, ref.ID); err != nil {
					h.t.Fatal(err)
				}
				c.returnCtxErr()
				h.obs.waitTerminal(ref.ID)
				return ref.ID
			}},
		{name: "detached",
			setup: func(h *harness, o work.Owner) string {
				ref, _ := h.running(o, agent)
				if _, err := h.s.Detach(context.Background(), o, ref.ID); err != nil {
					h.t.Fatal(err)
				}
				return ref.ID
			}},
		{name: "unknown",
			setup: func(h *harness, o work.Owner) string { return "0123456789abcdef0123456789abcdef" }},
		{name: "foreign",
			setup: func(h *harness, o work.Owner) string {
				ref, _ := h.running(work.NewOwner("other"), agent)
				return ref.ID
			}},
	}
}

// notFound checks err is ErrNotFound and carries nothing that would tell
// the three not-found cases apart.
func notFound(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, work.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	wantCode(t, err, "not_found")
	if err.Error() != work.ErrNotFound.Error() {
		t.Fatalf("not-found message %q differs from %q", err.Error(), work.ErrNotFound.Error())
	}
}

func TestActionsInEveryState(t *testing.T) {
	actions := []struct {
		name  string
		check func(t *testing.T, h *harness, sc stateCase, id string)
	}{
		{"status", func(t *testing.T, h *harness, sc stateCase, id string) {
			st, err := h.s.Status(t.Context(), coord, id)
			if !sc.visible {
				notFound(t, err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.State != sc.state || st.Work.ID != id || st.TargetLabel != "research" || st.Work.TargetID != "research" {
				t.Fatalf("status = %+v", st)
			}
			if st.ResultAvailable != sc.result {
				t.Fatalf("ResultAvailable = %v", st.ResultAvailable)
			}
			if !st.CreatedAt.Equal(t0) || st.StartedAt.IsZero() == sc.startedAt || st.FinishedAt.IsZero() == sc.finished {
				t.Fatalf("timestamps %v %v %v", st.CreatedAt, st.StartedAt, st.FinishedAt)
			}
		}},
		{"list", func(t *testing.T, h *harness, sc stateCase, id string) {
			l, err := h.s.List(t.Context(), coord)
			if err != nil {
				t.Fatal(err)
			}
			if !sc.visible {
				if len(l) != 0 {
					t.Fatalf("list = %+v, want empty", l)
				}
				return
			}
			if len(l) != 1 || l[0].Work.ID != id || l[0].State != sc.state {
				t.Fatalf("list = %+v", l)
			}
		}},
		{"result", func(t *testing.T, h *harness, sc stateCase, id string) {
			st, out, err := h.s.Result(context.Background(), coord, id, 0)
			if !sc.visible {
				notFound(t, err)
				return
			}
			if err != nil || st.State != sc.state {
				t.Fatalf("result = %+v %v", st, err)
			}
			if want := map[bool]string{true: "out"}[sc.result]; out != want {
				t.Fatalf("output = %q, want %q", out, want)
			}
			if h.clk.Pending() != h.deadlineTimers() {
				t.Fatalf("timeout 0 left a timer")
			}
		}},
		{"cancel", func(t *testing.T, h *harness, sc stateCase, id string) {
			r, err := h.s.Cancel(t.Context(), coord, id)
			if !sc.visible {
				notFound(t, err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.WorkID != id || r.Accepted != sc.cancelAccepted || r.State != sc.cancelState || !r.AcceptedAt.Equal(h.clk.Now()) {
				t.Fatalf("receipt = %+v", r)
			}
			if got := h.status(coord, id).State; got != sc.cancelState {
				t.Fatalf("state after cancel = %s", got)
			}
		}},
		{"detach", func(t *testing.T, h *harness, sc stateCase, id string) {
			r, err := h.s.Detach(t.Context(), coord, id)
			if !sc.visible {
				notFound(t, err)
				return
			}
			if err != nil || r.ID != id {
				t.Fatalf("detach = %+v %v", r, err)
			}
			_, err = h.s.Status(t.Context(), coord, id)
			notFound(t, err)
			if l, _ := h.s.List(t.Context(), coord); len(l) != 0 {
				t.Fatalf("list after detach = %+v", l)
			}
			if rows, more, _ := boundary.Rows(t.Context(), h.s, coord); len(rows) != 0 || more != 0 {
				t.Fatalf("rows after detach = %+v %d", rows, more)
			}
			_, err = h.s.Detach(t.Context(), coord, id)
			notFound(t, err)
		}},
		{"send", func(t *testing.T, h *harness, sc stateCase, id string) {
			r, err := h.s.Send(t.Context(), coord, id, "call-1", "look at page 2")
			switch {
			case !sc.visible:
				notFound(t, err)
			case sc.state.Terminal():
				if !errors.Is(err, work.ErrTerminal) {
					t.Fatalf("err = %v, want ErrTerminal", err)
				}
			default:
				if err != nil || r.WorkID != id || r.Cursor != "1" || r.ID == "" || !r.AcceptedAt.Equal(h.clk.Now()) {
					t.Fatalf("send = %+v %v", r, err)
				}
			}
		}},
		{"rows", func(t *testing.T, h *harness, sc stateCase, id string) {
			rows, more, _ := boundary.Rows(t.Context(), h.s, coord)
			if !sc.visible {
				if len(rows) != 0 || more != 0 {
					t.Fatalf("rows = %+v %d", rows, more)
				}
				return
			}
			if len(rows) != 1 || more != 0 || rows[0].ID != id || rows[0].State != sc.state ||
				rows[0].ResultAvailable != sc.result || rows[0].TargetLabel != "research" {
				t.Fatalf("rows = %+v %d", rows, more)
			}
		}},
	}
	for _, sc := range stateCases() {
		for _, a := range actions {
			t.Run(a.name+"/"+sc.name, func(t *testing.T) {
				h := newHarness(t, work.WithMaxRunning(1))
				id := sc.setup(h, coord)
				before := len(h.obs.ofType(observe.EventDetached))
				a.check(t, h, sc, id)
				if !sc.visible && len(h.obs.ofType(observe.EventDetached)) != before {
					t.Fatal("a not-found action emitted an event")
				}
			})
		}
	}
}

// deadlineTimers is the number of fake timers the running Works hold (one
// maximum-duration deadline each).
func (h *harness) deadlineTimers() int {
	n := 0
	for st, c := range census(h.s) {
		if st == work.StateRunning || st == work.StateCancelRequested {
			n += c
		}
	}
	return n
}

// TestNotFoundIsIndistinguishable runs every id action against a detached,
// an unknown and a foreign id, and requires identical errors.
func TestNotFoundIsIndistinguishable(t *testing.T) {
	h := newHarness(t)
	ref, _ := h.running(coord, agent)
	if _, err := h.s.Detach(t.Context(), coord, ref.ID); err != nil {
		t.Fatal(err)
	}
	foreign, _ := h.running(work.NewOwner("other"), agent)
	ids := []string{ref.ID, "ffffffffffffffffffffffffffffffff", foreign.ID, ""}
	var msgs []string
	for _, id := range ids {
		_, e1 := h.s.Status(t.Context(), coord, id)
		_, _, e2 := h.s.Result(context.Background(), coord, id, 0)
		_, e3 := h.s.Cancel(t.Context(), coord, id)
		_, e4 := h.s.Detach(t.Context(), coord, id)
		_, e5 := h.s.Send(t.Context(), coord, id, "c", "text")
		var b strings.Builder
		for _, err := range []error{e1, e2, e3, e4, e5} {
			notFound(t, err)
			b.WriteString(err.Error() + "|")
		}
		msgs = append(msgs, b.String())
	}
	for _, m := range msgs[1:] {
		if m != msgs[0] {
			t.Fatalf("not-found answers differ: %q vs %q", m, msgs[0])
		}
	}
	// The foreign Work is untouched.
	if st, err := h.s.Status(t.Context(), work.NewOwner("other"), foreign.ID); err != nil || st.State != work.StateRunning {
		t.Fatalf("foreign work changed: %+v %v", st, err)
	}
}
