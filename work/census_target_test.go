package work_test

import (
	"context"
	"testing"

	"github.com/agentwork/agentwork/work"
)

// TestSnapshotSlotsPerTarget: with a shared limit of 3, two Works of one
// target and one of another hold the slots; each target's SlotsInUse
// counts its own, they sum to the Snapshot's, and no target has a limit
// of its own (the in-process engine's is shared).
func TestSnapshotSlotsPerTarget(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(3))
	o := work.NewOwner("coordinator")
	h.running(o, agent)
	h.running(o, agent)
	h.running(o, fn)
	h.start(o, fn, h.child()) // queued: holds no slot

	snap, err := h.s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	sum := 0
	for _, tc := range snap.Counts {
		if tc.MaxRunning != 0 || tc.Pollers != 0 || tc.OldestQueued != 0 {
			t.Fatalf("target %s has deployment or per-target fields: %+v", tc.Target, tc)
		}
		got[tc.Target] = tc.SlotsInUse
		sum += tc.SlotsInUse
	}
	if got[agent.Label] != 2 || got[fn.Label] != 1 || sum != snap.SlotsInUse || snap.SlotsInUse != 3 {
		t.Fatalf("slots per target = %v (sum %d), snapshot slots %d; want %s=2 %s=1", got, sum, snap.SlotsInUse, agent.Label, fn.Label)
	}
	if snap.Deployment || snap.LiveOmitted != 0 {
		t.Fatalf("an in-process engine's snapshot says deployment: %+v", snap)
	}
}
