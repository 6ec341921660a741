package enginetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// canary is content the suite's children take and return: it must reach
// the child and the caller, and never an Observer.
const canary = "CANARY-7f3a9c-do-not-observe"

// legalEdges are the transitions a Work's events may take.
var legalEdges = map[observe.State][]observe.State{
	"":                        {work.StateQueued},
	work.StateQueued:          {work.StateRunning, work.StateCancelled},
	work.StateRunning:         {work.StateCancelRequested, work.StateCompleted, work.StateFailed, work.StateCancelled},
	work.StateCancelRequested: {work.StateCompleted, work.StateFailed, work.StateCancelled},
}

// observerEvents drives Work to each end (completed, failed, cancelled
// while queued, cancelled while running, detached and then completed) with
// the canary in its input, output, failure text and guidance, and checks
// what the Engine's Observer saw: per Work, transitions in order along
// legal edges, each event with its Work id and target label, exactly one
// terminal event; and the canary in no recorded event or call.
func (s *suite) observerEvents(t *testing.T) {
	// One slot per target: the Work cancelled while queued waits behind
	// a running one of its target.
	v := s.env(t, func(c *Config) { c.MaxRunning = 1 })
	o := owner(t, "obs")
	type want struct {
		ref   work.Ref
		label string
		end   observe.State
		path  []observe.State // the transitions, in order
	}
	var works []want
	add := func(ref work.Ref, label string, path ...observe.State) {
		works = append(works, want{ref, label, path[len(path)-1], path})
	}
	q, r, cr, c, f, x := work.StateQueued, work.StateRunning, work.StateCancelRequested,
		work.StateCompleted, work.StateFailed, work.StateCancelled

	// Completed at once (Echo), its output read.
	echo := v.start(o, Echo, "echo "+canary)
	if st, out := v.settle(o, echo.ID); st.State != c || out != "echo "+canary {
		t.Fatalf("echo: %s %q", st.State, out)
	}
	add(echo, Echo, q, r, c)

	// Completed (Func) while a second Func, cancelled while queued, waits.
	blocker, bc := v.running(o, Func, "")
	qtoken, qc := newControlWith(t, "", " "+canary)
	queued := v.start(o, Func, qtoken)
	if rc, err := v.e.Cancel(t.Context(), o, queued.ID); err != nil || rc.State != x {
		t.Fatalf("Cancel(queued) = %+v, %v", rc, err)
	}
	v.finish(bc, "out "+canary, nil)
	if st, out := v.settle(o, blocker.ID); st.State != c || out != "out "+canary {
		t.Fatalf("blocker: %s %q", st.State, out)
	}
	if st, _ := v.settle(o, queued.ID); st.State != x || qc.runs.Load() != 0 {
		t.Fatalf("queued cancel: %s, ran %d times", st.State, qc.runs.Load())
	}
	add(blocker, Func, q, r, c)
	add(queued, Func, q, x)

	// Failed (Agent) after taking guidance, with the canary in its input,
	// its guidance and its failure text.
	token, ac := newControlWith(t, "", " "+canary)
	failed := v.start(o, Agent, token)
	v.waitStarted(ac)
	if _, err := v.e.Send(t.Context(), o, failed.ID, "obs-call-1", "guidance "+canary); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if g := v.boundary(ac).guidance; len(g) != 1 || g[0] != "guidance "+canary {
		t.Fatalf("boundary delivered %q", g)
	}
	v.finish(ac, "", errors.New("failure "+canary))
	if st, _ := v.settle(o, failed.ID); st.State != f {
		t.Fatalf("failing child ended %s", st.State)
	}
	add(failed, Agent, q, r, f)

	// Cancelled while running (Agent).
	cancelled, cc := v.running(o, Agent, "")
	if rc, err := v.e.Cancel(t.Context(), o, cancelled.ID); err != nil || rc.State != cr {
		t.Fatalf("Cancel(running) = %+v, %v", rc, err)
	}
	if st, _ := v.settle(o, cancelled.ID); st.State != x {
		t.Fatalf("cancelled child ended %s", st.State)
	}
	<-cc.ended
	add(cancelled, Agent, q, r, cr, x)

	// Detached while running (Agent), then completed with the canary.
	detached, dc := v.running(o, Agent, "")
	if _, err := v.e.Detach(t.Context(), o, detached.ID); err != nil {
		t.Fatalf("Detach: %v", err)
	}
	v.finish(dc, "detached "+canary, nil)
	add(detached, Agent, q, r, c)

	// Every Work's terminal event has arrived (the detached one can no
	// longer be read through the Engine).
	v.eventually("every terminal event", func() bool {
		by := byWork(v.rec.Events())
		for _, w := range works {
			if !hasTerminal(by[w.ref.ID]) {
				return false
			}
		}
		return true
	})

	events := v.rec.Events()
	by := byWork(events)
	for _, w := range works {
		evs := by[w.ref.ID]
		for _, e := range evs {
			if e.Target != w.label {
				t.Errorf("Work %s (%s): event %s has target %q", w.ref.ID, w.label, e.Type, e.Target)
			}
		}
		trans := transitions(evs, s.caps.AtLeastOnceEvents)
		var prev observe.State
		var path []observe.State
		for i, e := range trans {
			if string(e.Type) != string(e.To) {
				t.Errorf("Work %s: transition %d has type %s but To %s", w.ref.ID, i, e.Type, e.To)
			}
			if e.From != prev || !legal(prev, e.To) {
				t.Errorf("Work %s (%s): transition %d is %q -> %q after %q; want a legal edge from %q\n%s",
					w.ref.ID, w.label, i, e.From, e.To, prev, prev, describe(evs))
			}
			prev = e.To
			path = append(path, e.To)
		}
		if fmt.Sprint(path) != fmt.Sprint(w.path) {
			t.Errorf("Work %s (%s): transitions %v, want %v\n%s", w.ref.ID, w.label, path, w.path, describe(evs))
		}
		if n := countTerminal(trans); n != 1 {
			t.Errorf("Work %s (%s): %d terminal events, want exactly 1\n%s", w.ref.ID, w.label, n, describe(evs))
		}
		// The terminal event's class: ClassCancelled for cancelled Work,
		// and what Status.Class says (the detached Work has no Status).
		var class string
		for _, e := range trans {
			if e.To.Terminal() {
				class = e.ErrorClass
			}
		}
		if w.end == x && class != work.ClassCancelled {
			t.Errorf("Work %s (%s): cancelled event has ErrorClass %q, want %q", w.ref.ID, w.label, class, work.ClassCancelled)
		}
		if w.ref.ID == detached.ID {
			continue
		}
		if st, err := v.e.Status(t.Context(), o, w.ref.ID); err != nil || st.Class != class {
			t.Errorf("Work %s (%s): Status.Class = %q (%v), want the terminal event's ErrorClass %q", w.ref.ID, w.label, st.Class, err, class)
		}
	}
	if by[detached.ID] != nil && !hasType(by[detached.ID], observe.EventDetached) {
		t.Errorf("Work %s: no detached event\n%s", detached.ID, describe(by[detached.ID]))
	}

	// Content: the canary reached the children and the caller (above),
	// and no field of any recorded event or call.
	if dump := fmt.Sprintf("%#v", events); strings.Contains(dump, canary) {
		t.Errorf("an Observer event carries content: %s", canaryContext(dump))
	}
	if dump := fmt.Sprintf("%#v", v.rec.Calls()); strings.Contains(dump, canary) {
		t.Errorf("an Observer call carries content: %s", canaryContext(dump))
	}
}

func byWork(events []observe.Event) map[string][]observe.Event {
	by := map[string][]observe.Event{}
	for _, e := range events {
		if e.WorkID != "" {
			by[e.WorkID] = append(by[e.WorkID], e)
		}
	}
	return by
}

func isTransition(e observe.Event) bool {
	switch e.Type {
	case observe.EventQueued, observe.EventRunning, observe.EventCancelRequested,
		observe.EventCompleted, observe.EventFailed, observe.EventCancelled:
		return true
	}
	return false
}

// transitions returns a Work's transition events in arrival order; with
// atLeastOnce, without exact repeats (the same From and To seen before).
func transitions(evs []observe.Event, atLeastOnce bool) []observe.Event {
	type edge struct{ from, to observe.State }
	seen := map[edge]bool{}
	var out []observe.Event
	for _, e := range evs {
		if !isTransition(e) {
			continue
		}
		k := edge{e.From, e.To}
		if atLeastOnce && seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, e)
	}
	return out
}

func legal(from, to observe.State) bool {
	for _, s := range legalEdges[from] {
		if s == to {
			return true
		}
	}
	return false
}

func hasTerminal(evs []observe.Event) bool { return countTerminal(evs) > 0 }

func countTerminal(evs []observe.Event) int {
	n := 0
	for _, e := range evs {
		if isTransition(e) && e.To.Terminal() {
			n++
		}
	}
	return n
}

func hasType(evs []observe.Event, typ observe.EventType) bool {
	for _, e := range evs {
		if e.Type == typ {
			return true
		}
	}
	return false
}

func describe(evs []observe.Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "\t%s %q -> %q target=%q\n", e.Type, e.From, e.To, e.Target)
	}
	return b.String()
}

func canaryContext(dump string) string {
	i := strings.Index(dump, canary)
	return dump[max(0, i-200):min(len(dump), i+len(canary)+50)]
}
