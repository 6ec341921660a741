package work_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestSnapshotCountsCancelRequestedSlots: with limit 2, one running, one
// cancel-requested and one queued Work, both slots are in use and the
// queue is blocked.
func TestSnapshotCountsCancelRequestedSlots(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(2))
	o := work.NewOwner("coordinator")
	h.running(o, agent) // holds its slot throughout
	stuckRef, stuck := h.running(o, fn)
	if _, err := h.s.Cancel(t.Context(), o, stuckRef.ID); err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(time.Minute)
	queued := h.start(o, agent, h.child())

	snap, _ := h.s.Snapshot(context.Background())
	if snap.MaxRunning != 2 || snap.SlotsInUse != 2 || snap.Queued != 1 || len(snap.Live) != 3 {
		t.Fatalf("snapshot = %+v, want limit 2, slots 2, queued 1, 3 live", snap)
	}
	if !snap.Time.Equal(t0.Add(time.Minute)) {
		t.Fatalf("Time = %v", snap.Time)
	}
	states := map[observe.State]int{}
	for _, lw := range snap.Live {
		states[lw.State]++
		if lw.Owner != "coordinator" || lw.Attempt != 1 || lw.ID == "" {
			t.Fatalf("live work = %+v", lw)
		}
	}
	if states[work.StateRunning] != 1 || states[work.StateCancelRequested] != 1 || states[work.StateQueued] != 1 {
		t.Fatalf("states = %v", states)
	}
	last := snap.Live[2]
	if last.ID != queued.ID || !last.Started.IsZero() || !last.Created.Equal(t0.Add(time.Minute)) {
		t.Fatalf("oldest-first order or queued fields wrong: %+v", snap.Live)
	}

	stuck.returnCtxErr()
	h.obs.waitTerminal(stuckRef.ID)
	// keep still holds its slot; the queued Work took the freed one.
	// The queued Work got a slot when the cancel-requested one returned.
	snap, _ = h.s.Snapshot(context.Background())
	if snap.Queued != 0 || snap.SlotsInUse != 2 || len(snap.Live) != 2 {
		t.Fatalf("after the cancel settled: %+v", snap)
	}
}

func TestTargetInfoContext(t *testing.T) {
	ctx := context.Background()
	if _, ok := observe.TargetInfoFrom(ctx); ok {
		t.Fatal("empty context has TargetInfo")
	}
	want := observe.TargetInfo{Provider: "openai", AgentID: "research", Description: "Researches."}
	got, ok := observe.TargetInfoFrom(observe.WithTargetInfo(ctx, want))
	if !ok || got != want {
		t.Fatalf("TargetInfoFrom = %+v, %v", got, ok)
	}
}

// TestSnapshotDeploymentTargets: a target named by WithDeploymentGauges
// has its row, all zero, before its first Work; once it has Work, one row
// with its counts; a target with Work but not named has its row too.
func TestSnapshotDeploymentTargets(t *testing.T) {
	h := newHarness(t, work.WithDeploymentGauges("idle", agent.Label, "idle"))
	rows := func() map[string]observe.TargetCounts {
		t.Helper()
		snap, err := h.s.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]observe.TargetCounts{}
		for _, c := range snap.Counts {
			if _, dup := m[c.Target]; dup {
				t.Fatalf("target %q has two rows: %+v", c.Target, snap.Counts)
			}
			m[c.Target] = c
		}
		return m
	}
	before := rows()
	if len(before) != 2 || before["idle"] != (observe.TargetCounts{Target: "idle"}) || before[agent.Label] != (observe.TargetCounts{Target: agent.Label}) {
		t.Fatalf("before any Work: %+v, want zero rows for idle and %s", before, agent.Label)
	}
	o := work.NewOwner("coordinator")
	h.running(o, agent)
	h.running(o, fn)
	after := rows()
	if len(after) != 3 || after["idle"] != (observe.TargetCounts{Target: "idle"}) {
		t.Fatalf("after: %+v, want idle zero and two targets with Work", after)
	}
	for _, label := range []string{agent.Label, fn.Label} {
		if c := after[label]; c.Counts[1] != 1 || c.SlotsInUse != 1 {
			t.Fatalf("%s: %+v, want one running Work holding a slot", label, c)
		}
	}
}
