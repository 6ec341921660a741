package work

import (
	"container/list"
	"crypto/sha256"

	"github.com/agentwork/agentwork/work/internal/contract"
)

// launchRecord remembers one launch identity: its target, a digest of its
// input and the Ref it got. It never holds the input.
type launchRecord struct {
	target string
	digest [sha256.Size]byte
	ref    Ref
	ready  chan struct{} // closed once the Work is registered
}

// launchRecords is an owner's bounded launch-identity table, keyed by the
// SHA-256 digest of the identity.
type launchRecords struct {
	byID  map[[sha256.Size]byte]*launchRecord
	order list.List // identity digests, oldest first
}

// replayLocked looks spec's launch identity up for the owner. ok reports
// whether it was used before; then the caller returns ref (after ready
// closes) or err (ErrConflict: another target or input).
func (s *Engine) replayLocked(spec *Spec) (r *launchRecord, err error, ok bool) {
	if spec.CallID == "" {
		return nil, nil, false
	}
	os := s.ownerLocked(spec.Owner.id)
	if os == nil {
		return nil, nil, false
	}
	r = os.launches.byID[sha256.Sum256([]byte(spec.CallID))]
	if r == nil {
		return nil, nil, false
	}
	if r.target != spec.Target.Label || r.digest != spec.InputDigest {
		return nil, errLaunchConflict, true
	}
	return r, nil, true
}

// recordLaunchLocked remembers spec's launch identity for os, with the Ref
// its Work gets. It returns nil when spec has no identity.
func recordLaunchLocked(os *ownerState, spec *Spec, ref Ref) *launchRecord {
	if spec.CallID == "" {
		return nil
	}
	lr := &os.launches
	if lr.byID == nil {
		lr.byID = make(map[[sha256.Size]byte]*launchRecord)
	}
	for lr.order.Len() >= contract.MaxLaunches {
		delete(lr.byID, lr.order.Remove(lr.order.Front()).([sha256.Size]byte))
	}
	key := sha256.Sum256([]byte(spec.CallID))
	r := &launchRecord{target: spec.Target.Label, digest: spec.InputDigest, ref: ref, ready: make(chan struct{})}
	lr.order.PushBack(key)
	lr.byID[key] = r
	return r
}
