package work_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
)

// TestListOrderAndCap: unfinished first, then finished; newest first within
// each; at most 50.
func TestListOrderAndCap(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(3), work.WithMaxOutstanding(100), work.WithMaxStarts(0))
	type entry struct {
		id       string
		finished bool
	}
	var all []entry
	var kids []*child
	var keep []int
	for range 60 {
		c := h.child()
		ref := h.start(coord, agent, c)
		all = append(all, entry{id: ref.ID})
		kids = append(kids, c)
	}
	// Keep 0, 20 and 40 running (filling the three slots) and finish every
	// other Work as it reaches a slot; 41..59 stay queued.
	for i, c := range kids {
		<-c.started
		if i%20 == 0 {
			keep = append(keep, i)
			if len(keep) == 3 {
				break
			}
			continue
		}
		c.complete("")
		h.obs.waitTerminal(all[i].id)
		all[i].finished = true
	}
	l, err := h.s.List(t.Context(), coord)
	if err != nil || len(l) != 50 {
		t.Fatalf("len = %d %v", len(l), err)
	}
	var want []string
	for i := len(all) - 1; i >= 0; i-- {
		if !all[i].finished {
			want = append(want, all[i].id)
		}
	}
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].finished {
			want = append(want, all[i].id)
		}
	}
	want = want[:50]
	for i, st := range l {
		if st.Work.ID != want[i] {
			t.Fatalf("list[%d] = %s (%s), want %s", i, st.Work.ID, st.State, want[i])
		}
	}
	seenFinished := false
	for _, st := range l {
		if st.State.Terminal() {
			seenFinished = true
		} else if seenFinished {
			t.Fatal("unfinished after finished")
		}
	}
	if _, err := h.s.List(t.Context(), work.Owner{}); !errors.Is(err, work.ErrInvalidOwner) {
		t.Fatal(err)
	}
	if l, err := h.s.List(t.Context(), work.NewOwner("nobody")); err != nil || l == nil || len(l) != 0 {
		t.Fatalf("empty owner list = %#v %v", l, err)
	}
}

// TestRowsPriority builds Work in every priority class and checks the
// documented order: unread results; failed; running and cancel-requested;
// queued; the rest (read results, cancelled). Newest first within a class.
func TestRowsPriority(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(3), work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	names := map[string]string{} // id -> name
	finish := func(name string, end func(c *child, id string)) string {
		ref, c := h.running(coord, agent)
		end(c, ref.ID)
		h.obs.waitTerminal(ref.ID)
		names[ref.ID] = name
		h.clk.Advance(time.Second)
		return ref.ID
	}
	complete := func(c *child, _ string) { c.complete("r") }
	read := func(c *child, id string) {
		c.complete("r")
		h.obs.waitTerminal(id)
		h.s.Result(context.Background(), coord, id, 0)
	}
	failed := func(c *child, _ string) { c.fail() }
	cancelled := func(c *child, id string) { h.s.Cancel(t.Context(), coord, id); c.returnCtxErr() }

	finish("read1", read)
	finish("unread1", complete)
	finish("failed1", failed)
	finish("cancelled1", cancelled)
	finish("unread2", complete)
	finish("failed2", failed)
	finish("read2", read)
	r1, _ := h.running(coord, agent)
	names[r1.ID] = "running1"
	h.clk.Advance(time.Second)
	cr, _ := h.running(coord, agent)
	h.s.Cancel(t.Context(), coord, cr.ID)
	names[cr.ID] = "cancelreq"
	h.clk.Advance(time.Second)
	r2, _ := h.running(coord, agent)
	names[r2.ID] = "running2"
	q1 := h.start(coord, agent, h.child())
	names[q1.ID] = "queued1"
	h.clk.Advance(time.Second)
	q2 := h.start(coord, agent, h.child())
	names[q2.ID] = "queued2"
	h.clk.Advance(time.Second)

	rows, more, _ := boundary.Rows(t.Context(), h.s, coord)
	var got []string
	for _, r := range rows {
		got = append(got, names[r.ID])
	}
	want := "unread2 unread1 failed2 failed1 running2 cancelreq running1 queued2 queued1 read2 cancelled1 read1"
	if strings.Join(got, " ") != want || more != 0 {
		t.Fatalf("rows = %s (more %d)\nwant   %s", strings.Join(got, " "), more, want)
	}
	for _, r := range rows {
		switch names[r.ID] {
		case "unread1", "read1":
			if !r.ResultAvailable || r.Elapsed != 0 || r.State != work.StateCompleted {
				t.Fatalf("%s: %+v", names[r.ID], r)
			}
		case "running1":
			if r.Elapsed != 4*time.Second || r.State != work.StateRunning || r.TargetLabel != "research" {
				t.Fatalf("running1: %+v", r)
			}
		case "queued1":
			if r.Elapsed != 2*time.Second || r.ResultAvailable {
				t.Fatalf("queued1: %+v", r)
			}
		}
	}
	// One more queued Work pushes the lowest row (the oldest of "the rest") out.
	q3 := h.start(coord, agent, h.child())
	names[q3.ID] = "queued3"
	rows, more, _ = boundary.Rows(t.Context(), h.s, coord)
	got = got[:0]
	for _, r := range rows {
		got = append(got, names[r.ID])
	}
	want = "unread2 unread1 failed2 failed1 running2 cancelreq running1 queued3 queued2 queued1 read2 cancelled1"
	if strings.Join(got, " ") != want || more != 1 || boundary.MaxRows != 12 {
		t.Fatalf("rows = %s (more %d)\nwant   %s", strings.Join(got, " "), more, want)
	}
	if rows, more, _ := boundary.Rows(t.Context(), h.s, work.Owner{}); rows != nil || more != 0 {
		t.Fatal("zero owner rows")
	}
}

func TestRowsMoreCount(t *testing.T) {
	h := newHarness(t, work.WithMaxOutstanding(1000), work.WithMaxStarts(0), work.WithMaxRunning(1))
	h.running(work.NewOwner("b"), fn)
	for range 20 {
		h.start(coord, agent, h.child())
	}
	rows, more, _ := boundary.Rows(t.Context(), h.s, coord)
	if len(rows) != 12 || more != 8 {
		t.Fatalf("rows %d more %d", len(rows), more)
	}
}
