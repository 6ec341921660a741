package driver

import (
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
)

func TestSlotsSnapshot(t *testing.T) {
	var s Slots
	if snap := s.Snapshot([]string{"b", "a"}, 2); len(snap.Live) != 0 || len(snap.Counts) != 2 || snap.Counts[0].Target != "a" ||
		snap.Counts[0].MaxRunning != 2 || snap.SlotsInUse != 0 {
		t.Fatalf("empty: %+v", snap)
	}
	a := &Attempt{ID: "w1", Owner: "o", Label: "a", Kind: work.KindAgent, N: 2, Created: t0, Started: t0.Add(time.Second)}
	b := &Attempt{ID: "w2", Owner: "o", Label: "a", Kind: work.KindFunction, N: 1, Created: t0}
	removeA := s.Add(a)
	removeB := s.Add(b)
	s.Cancelled(b, t0.Add(3*time.Second))
	s.Cancelled(b, t0.Add(9*time.Second)) // the first arrival stands
	snap := s.Snapshot([]string{"a", "b"}, 4)
	if snap.SlotsInUse != 2 || snap.Counts[0].SlotsInUse != 2 || snap.Counts[1].SlotsInUse != 0 || len(snap.Live) != 2 {
		t.Fatalf("two in a: %+v", snap)
	}
	for _, lw := range snap.Live {
		switch lw.ID {
		case "w1":
			if lw.State != work.StateRunning || lw.Attempt != 2 || !lw.Started.Equal(t0.Add(time.Second)) {
				t.Fatalf("running: %+v", lw)
			}
		case "w2":
			if lw.State != work.StateCancelRequested || !lw.CancelAt.Equal(t0.Add(3*time.Second)) {
				t.Fatalf("cancel-requested: %+v", lw)
			}
		default:
			t.Fatalf("unknown %+v", lw)
		}
	}
	removeA()
	removeB()
	if snap := s.Snapshot([]string{"a"}, 4); snap.SlotsInUse != 0 || len(snap.Live) != 0 {
		t.Fatalf("removed: %+v", snap)
	}
}
