package work_test

import (
	"fmt"
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
		_, err := h.s.Status(t.Context(), coord, id)
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
	if _, err := h.s.Status(t.Context(), coord, a); err != nil {
		t.Fatal("evicted at exactly the age")
	}
	h.clk.Advance(time.Millisecond)
	_, err := h.s.Status(t.Context(), coord, a)
	notFound(t, err)
	if _, err := h.s.Status(t.Context(), coord, b); err != nil {
		t.Fatal("b evicted too early")
	}
	if c := census(h.s); c[work.StateCompleted] != 1 {
		t.Fatalf("census = %v", c)
	}
	h.clk.Advance(time.Hour)
	if l, _ := h.s.List(t.Context(), coord); len(l) != 0 {
		t.Fatalf("list = %v", l)
	}
	if censusTotal(h.s) != 0 {
		t.Fatalf("census = %v", census(h.s))
	}
}

// TestRetentionEvictionOrder: beyond the count bound, read results go
// first, then failed and cancelled Work, and unread results last.
func TestRetentionEvictionOrder(t *testing.T) {
	h := newHarness(t, work.WithRetention(3, 0))
	finish := func(how string) string {
		ref, c := h.running(coord, agent)
		switch how {
		case "fail":
			c.fail()
		case "cancel":
			h.s.Cancel(t.Context(), coord, ref.ID)
			c.returnCtxErr()
		default:
			c.complete(how)
		}
		h.obs.waitTerminal(ref.ID)
		if how == "read" {
			if _, _, err := h.s.Result(t.Context(), coord, ref.ID, 0); err != nil {
				t.Fatal(err)
			}
		}
		return ref.ID
	}
	kept := func(want ...string) {
		t.Helper()
		l, _ := h.s.List(t.Context(), coord)
		got := map[string]bool{}
		for _, st := range l {
			got[st.Work.ID] = true
		}
		if len(got) != len(want) {
			t.Fatalf("%d kept, want %d", len(got), len(want))
		}
		for _, id := range want {
			if !got[id] {
				t.Fatalf("%s was evicted; kept %v", id, got)
			}
		}
	}
	u1 := finish("unread")
	f := finish("fail")
	finish("read")
	u2 := finish("unread")
	kept(u1, f, u2) // the read result went, though it finished after u1 and f
	x := finish("cancel")
	kept(u1, u2, x) // then the failed one
	u3 := finish("unread")
	kept(u1, u2, u3) // then the cancelled one
	u4 := finish("unread")
	kept(u2, u3, u4) // unread results last, oldest first
}
