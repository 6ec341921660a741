package telemetry_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// fixed is a watched engine that answers one Snapshot.
type fixed struct{ snap observe.Snapshot }

func (f *fixed) Snapshot(context.Context) (observe.Snapshot, error) { return f.snap, nil }

// A durable runner's two kinds of Snapshot through the same Observer: a
// worker's per-target slots and limits (exported with their target, no
// shared limit) and a deployment's counts, queue ages and pollers (no
// slots, its cancel-requested rows leave the age to the worker, its
// omitted rows counted in More). The in-process engine's shared limit is
// target "*".
func TestDeploymentAndWorkerSnapshots(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(3))
	now := epoch.Add(time.Hour)
	var counts [len(observe.States)]int
	counts[1] = 2 // running
	counts[0] = 1 // queued
	worker := &fixed{observe.Snapshot{Time: now, SlotsInUse: 2,
		Counts: []observe.TargetCounts{{Target: "researcher", SlotsInUse: 2, MaxRunning: 2}},
		Live: []observe.LiveWork{
			{ID: "w1", Target: "researcher", Owner: "o", State: work.StateRunning, Attempt: 1, Created: now.Add(-time.Minute), Started: now.Add(-50 * time.Second)},
			{ID: "w2", Target: "researcher", Owner: "o", State: work.StateCancelRequested, Attempt: 1, Created: now.Add(-time.Minute),
				Started: now.Add(-50 * time.Second), CancelAt: now.Add(-20 * time.Second)},
		}}}
	deployment := &fixed{observe.Snapshot{Time: now, Deployment: true, LiveOmitted: 7,
		Counts: []observe.TargetCounts{{Target: "researcher", Counts: counts, OldestQueued: 42 * time.Second, Pollers: 1},
			{Target: "lost", Counts: counts, OldestQueued: 90 * time.Second}},
		Live: []observe.LiveWork{
			{ID: "d1", Target: "researcher", Owner: "o", State: work.StateCancelRequested, Attempt: 1, Created: now.Add(-time.Hour), Started: now.Add(-time.Hour)},
		}}}
	defer h.obs.Watch(worker)()
	defer h.obs.Watch(deployment)()

	var got []string
	for _, s := range series(h.collect()) {
		for _, p := range []string{"agentwork.work.slots_in_use", "agentwork.work.concurrency_limit", "agentwork.work.oldest_", "agentwork.target.pollers"} {
			if strings.HasPrefix(s, p) {
				got = append(got, s)
			}
		}
	}
	want := []string{
		"agentwork.target.pollers{target=lost} 0",
		"agentwork.target.pollers{target=researcher} 1",
		"agentwork.work.concurrency_limit{target=*} 3",
		"agentwork.work.concurrency_limit{target=researcher} 2",
		"agentwork.work.oldest_approval_age{target=lost} 0",
		"agentwork.work.oldest_approval_age{target=researcher} 0",
		"agentwork.work.oldest_cancel_requested_age{target=lost} 0",
		"agentwork.work.oldest_cancel_requested_age{target=researcher} 20",
		"agentwork.work.oldest_queued_age{target=lost} 90",
		"agentwork.work.oldest_queued_age{target=researcher} 42",
		"agentwork.work.slots_in_use{target=researcher} 2",
	}
	diff(t, "gauges", strings.Join(got, "\n"), strings.Join(want, "\n"))

	p := h.obs.Status()
	if p.Slots != (telemetry.StatusSlots{InUse: 2, Limit: 5}) || p.More != 7 || len(p.Work) != 3 {
		t.Fatalf("status slots %+v, more %d, %d rows", p.Slots, p.More, len(p.Work))
	}
	for _, tg := range p.Targets {
		switch tg.Target {
		case "researcher":
			if tg.SlotsInUse != 2 || tg.Limit != 2 || tg.Pollers == nil || *tg.Pollers != 1 || tg.States["running"] != 2 || tg.OldestQueuedAgeSeconds != 42 {
				t.Errorf("researcher row %+v", tg)
			}
		case "lost":
			if tg.Pollers == nil || *tg.Pollers != 0 || tg.Limit != 0 {
				t.Errorf("lost row %+v", tg)
			}
		}
	}
}
