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

// ResultBytes is the output bound of spec's Work: spec.MaxResultBytes when
// set and below the engine's max.
func ResultBytes(spec work.Spec, max int) int {
	if spec.MaxResultBytes > 0 && spec.MaxResultBytes < max {
		return spec.MaxResultBytes
	}
	return max
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

// CallRefused is the refusal of a foreground call by a top-level owner
// when the engine allows no depth at all (maxDepth < 1): work.ErrLimit.
func CallRefused(spec work.Spec, maxDepth int) error {
	if spec.Owner.Depth() == 0 && !spec.Owner.IsZero() && maxDepth < 1 {
		return work.ErrLimit
	}
	return nil
}
