package driver

import (
	"slices"
	"strings"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// DeploymentSnapshot returns the deployment Snapshot
// (observe.Snapshot.Deployment) taken at now of counts, one per target in
// any order, and live, the live Works it shows (omitted: how many it
// leaves out). Its Counts are counts sorted by target and its Live is live
// oldest first (observe.SortLive), both sorted in place; its Queued,
// Waiting and AwaitingApproval are the sums of the targets' own, Queued
// counting their queued Work that does not await approval (which is in no
// dispatch queue).
func DeploymentSnapshot(now time.Time, counts []observe.TargetCounts, live []observe.LiveWork, omitted int) observe.Snapshot {
	snap := observe.Snapshot{Time: now, Deployment: true, Counts: counts, Live: live, LiveOmitted: omitted}
	slices.SortFunc(snap.Counts, func(a, b observe.TargetCounts) int { return strings.Compare(a.Target, b.Target) })
	for _, tc := range counts {
		snap.Queued += tc.Counts[work.StateQueued.Index()] - tc.AwaitingApproval
		snap.Waiting += tc.Waiting
		snap.AwaitingApproval += tc.AwaitingApproval
	}
	observe.SortLive(snap.Live)
	return snap
}
