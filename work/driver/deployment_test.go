package driver_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// TestDeploymentSnapshot: a deployment Snapshot's totals are its targets'
// (queued Work awaiting approval counted apart, not in Queued), its
// targets sorted, its Live oldest first, with the time and the omitted
// count given.
func TestDeploymentSnapshot(t *testing.T) {
	now := time.Unix(1000, 0)
	q, r := work.StateQueued.Index(), work.StateRunning.Index()
	var a, b observe.TargetCounts
	a.Target, b.Target = "b", "a"
	a.Counts[q], a.Counts[r], a.AwaitingApproval, a.Waiting = 5, 2, 3, 1
	b.Counts[q], b.Counts[r], b.Waiting = 1, 4, 2
	old, young := observe.LiveWork{ID: "old", Created: now.Add(-time.Hour)}, observe.LiveWork{ID: "young", Created: now}
	got := driver.DeploymentSnapshot(now, []observe.TargetCounts{a, b}, []observe.LiveWork{young, old}, 7)
	want := observe.Snapshot{Time: now, Deployment: true, LiveOmitted: 7, Queued: 2 + 1, Waiting: 1 + 2, AwaitingApproval: 3,
		Counts: []observe.TargetCounts{b, a}, Live: []observe.LiveWork{old, young}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("DeploymentSnapshot:\n got %+v\nwant %+v", got, want)
	}
	if empty := driver.DeploymentSnapshot(now, nil, nil, 0); !empty.Deployment || empty.Queued != 0 || !empty.Time.Equal(now) {
		t.Fatalf("DeploymentSnapshot of nothing: %+v", empty)
	}
}
