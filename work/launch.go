package work

import (
	"container/list"
	"crypto/sha256"
)

// MaxLaunchRecords bounds the launch identities an owner's Supervisor
// remembers (Spec.CallID); beyond it the oldest is forgotten, and a replay
// of a forgotten identity starts new Work.
const MaxLaunchRecords = 256

// launchRecord remembers one launch identity: its target, a digest of its
// input and the Ref it got. It never holds the input.
type launchRecord struct {
	target string
	digest [sha256.Size]byte
	ref    Ref
	ready  chan struct{} // closed once the Work is registered
}

// launchRecords is an owner's bounded launch-identity table.
type launchRecords struct {
	byID  map[string]*launchRecord
	order list.List // call ids, oldest first
}

// replayLocked looks spec's launch identity up for the owner. ok reports
// whether it was used before; then the caller returns ref (after ready
// closes) or err (ErrConflict: another target or input).
func (s *Supervisor) replayLocked(spec *Spec) (r *launchRecord, err error, ok bool) {
	os := s.owners[spec.Owner.id]
	if spec.CallID == "" || os == nil {
		return nil, nil, false
	}
	r = os.launches.byID[spec.CallID]
	if r == nil {
		return nil, nil, false
	}
	if r.target != spec.Target.Label || r.digest != spec.InputDigest {
		return nil, errLaunchConflict, true
	}
	return r, nil, true
}

var errLaunchConflict = newError(ErrConflict.Code, "the tool-call id was already used to launch other work (another target or input)")

// recordLaunchLocked remembers spec's launch identity for os, with the Ref
// its Work gets. It returns nil when spec has no identity.
func recordLaunchLocked(os *ownerState, spec *Spec, ref Ref) *launchRecord {
	if spec.CallID == "" {
		return nil
	}
	lr := &os.launches
	if lr.byID == nil {
		lr.byID = make(map[string]*launchRecord)
	}
	for lr.order.Len() >= MaxLaunchRecords {
		delete(lr.byID, lr.order.Remove(lr.order.Front()).(string))
	}
	r := &launchRecord{target: spec.Target.Label, digest: spec.InputDigest, ref: ref, ready: make(chan struct{})}
	lr.order.PushBack(spec.CallID)
	lr.byID[spec.CallID] = r
	return r
}
