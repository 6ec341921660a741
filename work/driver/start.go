package driver

import (
	"context"
	"encoding/hex"
	"time"

	"github.com/agentwork/agentwork/work"
)

// LaunchIdentity is spec's launch identity as a registry keeps it: the SHA-256 of
// the tool-call id and of the input, hex, never either ("" and "" for a
// start with no call id).
func LaunchIdentity(spec work.Spec) (key, digest string) {
	if spec.CallID == "" {
		return "", ""
	}
	return Digest(spec.CallID), hex.EncodeToString(spec.InputDigest[:])
}

// Refused reports a refused start to obs, with the caller's context (as
// work.Supervisor does): reason is a limit's name or a failure class,
// budget the budget that could not be covered.
func Refused(ctx context.Context, obs work.Observer, spec work.Spec, reason, budget string) {
	obs.Event(ctx, work.Event{Type: work.EventRefused, Owner: spec.Owner.ID(), Depth: spec.Owner.Depth(),
		Target: spec.Target.Label, Kind: spec.Target.Kind, Time: time.Now(), ErrorClass: reason, Budget: budget})
}

// TooDeep refuses (work.LimitRefusal) and reports a start by an owner at
// or past maxDepth; nil otherwise.
func TooDeep(ctx context.Context, obs work.Observer, spec work.Spec, maxDepth int) error {
	if spec.Owner.Depth() < maxDepth {
		return nil
	}
	Refused(ctx, obs, spec, work.LimitDepth, "")
	return work.LimitRefusal(work.LimitDepth, maxDepth)
}
