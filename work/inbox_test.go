package work_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
)

func TestRetentionCount(t *testing.T) {
	h := newHarness(t, work.WithRetention(3, 0))
	var ids []string
	for i := range 5 {
		ref, c := h.running(coord, agent)
		h.clk.Advance(time.Second)
		c.complete(fmt.Sprint(i))
		h.obs.waitTerminal(ref.ID)
		ids = append(ids, ref.ID)
	}
	for i, id := range ids {
		_, err := h.s.Status(coord, id)
		if i < 2 {
			notFound(t, err)
		} else if err != nil {
			t.Fatalf("item %d evicted: %v", i, err)
		}
	}
	if c := census(h.s); c[work.StateCompleted] != 3 || censusTotal(h.s) != 3 {
		t.Fatalf("census = %v", c)
	}
	// Unfinished Work is never evicted.
	ref, c := h.running(coord, agent)
	for range 4 {
		r, c2 := h.running(coord, agent)
		c2.complete("")
		h.obs.waitTerminal(r.ID)
	}
	if st := h.status(coord, ref.ID); st.State != work.StateRunning {
		t.Fatal(st)
	}
	c.complete("")
}

func TestRetentionAgeOldestFirst(t *testing.T) {
	h := newHarness(t, work.WithRetention(64, time.Minute))
	finish := func() string {
		ref, c := h.running(coord, agent)
		c.complete("")
		h.obs.waitTerminal(ref.ID)
		return ref.ID
	}
	a := finish()
	h.clk.Advance(30 * time.Second)
	b := finish()
	h.clk.Advance(30 * time.Second) // a is exactly 60s old: kept
	if _, err := h.s.Status(coord, a); err != nil {
		t.Fatal("evicted at exactly the age")
	}
	h.clk.Advance(time.Millisecond)
	_, err := h.s.Status(coord, a)
	notFound(t, err)
	if _, err := h.s.Status(coord, b); err != nil {
		t.Fatal("b evicted too early")
	}
	if c := census(h.s); c[work.StateCompleted] != 1 {
		t.Fatalf("census = %v", c)
	}
	h.clk.Advance(time.Hour)
	if l, _ := h.s.List(coord); len(l) != 0 {
		t.Fatalf("list = %v", l)
	}
	if censusTotal(h.s) != 0 {
		t.Fatalf("census = %v", census(h.s))
	}
}

func TestRelease(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(1), work.WithMaxStarts(2))
	runRef, runC := h.running(coord, agent)
	qc := h.child()
	qRef := h.start(coord, agent, qc)
	other, otherC := work.NewOwner("other"), h.child()
	oRef := h.start(other, agent, otherC)
	h.refused(coord, work.LimitStarts)

	h.s.Release(coord)
	for _, id := range []string{runRef.ID, qRef.ID} {
		_, err := h.s.Status(coord, id)
		notFound(t, err)
	}
	if ev := h.obs.waitTerminal(qRef.ID); ev.To != work.StateCancelled {
		t.Fatalf("queued = %+v", ev)
	}
	if runC.ctx.Err() == nil {
		t.Fatal("running child not cancelled")
	}
	runC.returnCtxErr()
	if ev := h.obs.waitTerminal(runRef.ID); ev.To != work.StateCancelled {
		t.Fatalf("running = %+v", ev)
	}
	// The other owner's Work now runs; the released owner has a new budget.
	<-otherC.started
	if st := h.status(other, oRef.ID); st.State != work.StateRunning {
		t.Fatal(st)
	}
	if c := census(h.s); censusTotal(h.s) != 1 || c[work.StateRunning] != 1 {
		t.Fatalf("census = %v", c)
	}
	h.start(coord, agent, h.child())
	h.s.Release(work.NewOwner("never-seen"))
	h.s.Release(work.Owner{})
}

func TestChildScopeReleasedWhenChildEnds(t *testing.T) {
	h := newHarness(t)
	ref, c := h.running(coord, agent)
	scope := c.ex.Scope()
	if scope.Depth() != 1 || scope.ID() == coord.ID() || scope.IsZero() {
		t.Fatalf("scope = %+v", scope)
	}
	gRef, gc := h.running(scope, fn)
	doneRef, err := h.s.Start(t.Context(), work.Spec{Owner: scope, Target: fn, Run: immediate("x")})
	if err != nil {
		t.Fatal(err)
	}
	h.obs.waitTerminal(doneRef.ID)
	if l, _ := h.s.List(scope); len(l) != 2 {
		t.Fatalf("scope list = %v", l)
	}
	if l, _ := h.s.List(coord); len(l) != 1 {
		t.Fatalf("owner sees its child's work: %v", l)
	}
	c.complete("parent done")
	h.obs.waitTerminal(ref.ID)
	if gc.ctx.Err() == nil {
		t.Fatal("grandchild not cancelled when its parent ended")
	}
	gc.returnCtxErr()
	if ev := h.obs.waitTerminal(gRef.ID); ev.To != work.StateCancelled {
		t.Fatalf("grandchild = %+v", ev)
	}
	if l, _ := h.s.List(scope); len(l) != 0 {
		t.Fatalf("scope still lists %v", l)
	}
	if c := census(h.s); censusTotal(h.s) != 1 || c[work.StateCompleted] != 1 {
		t.Fatalf("census = %v", c)
	}
}

func TestClose(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(2))
	ctxChild := func(ctx context.Context) (string, error) { <-ctx.Done(); return "", ctx.Err() }
	var refs []work.Ref
	for range 5 {
		ref, err := h.s.Start(t.Context(), work.Spec{Owner: coord, Target: agent, Run: ctxChild})
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
	}
	if err := h.s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		if st := h.status(coord, r.ID); st.State != work.StateCancelled {
			t.Fatalf("%s after Close", st.State)
		}
	}
	_, err := h.s.Start(t.Context(), work.Spec{Owner: coord, Target: agent, Run: ctxChild})
	if !errors.Is(err, work.ErrClosed) {
		t.Fatalf("start after close: %v", err)
	}
	wantCode(t, err, "closed")
	if evs := h.obs.ofType(work.EventRefused); len(evs) != 1 || evs[0].ErrorClass != "closed" {
		t.Fatalf("refused = %+v", evs)
	}
	if _, err := h.s.Call(t.Context(), work.Spec{Owner: coord, Target: agent, Run: ctxChild}); !errors.Is(err, work.ErrClosed) {
		t.Fatalf("call after close: %v", err)
	}
	// Owner operations keep working; Close is idempotent.
	if l, err := h.s.List(coord); err != nil || len(l) != 5 {
		t.Fatalf("list = %v %v", l, err)
	}
	if err := h.s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func TestCloseRespectsContext(t *testing.T) {
	h := newHarness(t)
	ref, c := h.running(coord, agent) // ignores its context until told
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error)
	go func() { errc <- h.s.Close(ctx) }()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Close = %v", err)
	}
	if st := h.status(coord, ref.ID); st.State != work.StateCancelRequested {
		t.Fatalf("state = %s", st.State)
	}
	c.complete("finished after close")
	if err := h.s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st := h.status(coord, ref.ID); st.State != work.StateCompleted {
		t.Fatalf("state = %s", st.State)
	}
}

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
	l, err := h.s.List(coord)
	if err != nil || len(l) != work.MaxListed || work.MaxListed != 50 {
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
	if _, err := h.s.List(work.Owner{}); !errors.Is(err, work.ErrInvalidOwner) {
		t.Fatal(err)
	}
	if l, err := h.s.List(work.NewOwner("nobody")); err != nil || l == nil || len(l) != 0 {
		t.Fatalf("empty owner list = %#v %v", l, err)
	}
}

// TestRowsPriority builds Work in every priority class and checks the
// documented order: unread results; failed; running and cancel-requested;
// queued; the rest (read results, cancelled). Newest first within a class.
func TestRowsPriority(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(3), work.WithMaxDuration(0))
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
	cancelled := func(c *child, id string) { h.s.Cancel(coord, id); c.returnCtxErr() }

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
	h.s.Cancel(coord, cr.ID)
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

	rows, more := h.s.Rows(coord)
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
	rows, more = h.s.Rows(coord)
	got = got[:0]
	for _, r := range rows {
		got = append(got, names[r.ID])
	}
	want = "unread2 unread1 failed2 failed1 running2 cancelreq running1 queued3 queued2 queued1 read2 cancelled1"
	if strings.Join(got, " ") != want || more != 1 || work.MaxRows != 12 {
		t.Fatalf("rows = %s (more %d)\nwant   %s", strings.Join(got, " "), more, want)
	}
	if rows, more := h.s.Rows(work.Owner{}); rows != nil || more != 0 {
		t.Fatal("zero owner rows")
	}
}

func TestRowsMoreCount(t *testing.T) {
	h := newHarness(t, work.WithMaxOutstanding(1000), work.WithMaxStarts(0), work.WithMaxRunning(1))
	h.running(work.NewOwner("b"), fn)
	for range 20 {
		h.start(coord, agent, h.child())
	}
	rows, more := h.s.Rows(coord)
	if len(rows) != 12 || more != 8 {
		t.Fatalf("rows %d more %d", len(rows), more)
	}
}
