package temporal

import (
	"time"

	"github.com/agentwork/agentwork/work"
)

// Names of the updates and queries of children that talk back (updates
// and questions): part of the wire format, as those in wire.go.
const (
	updateReport             = "report"       // an update the child reports (from its attempt)
	updateAwait              = "await-answer" // the wait of the child's open questions (from its attempt)
	queryUpdates             = "updates"      // the accepted updates after a cursor (Engine.Updates)
	queryUpdateMap           = "update-sizes" // their sequence numbers, sizes and times (the notices)
	updateRefusedUnavailable = work.UpdateRefusedUnavailable
)

// reportRequest is one update a child reports: its idempotency key, its
// encoded payload (JSON) and whether it asks a question. It is workflow
// state once accepted: the Work's history holds it.
type reportRequest struct {
	Key      string
	Value    []byte
	Question bool `json:",omitempty"`
}

// reportReply is the Work workflow's decision on a reportRequest (the
// shared work.UpdateLog decides): the receipt, or the refusal reason.
type reportReply struct {
	Seq       int
	Duplicate bool   `json:",omitempty"`
	Reason    string `json:",omitempty"`
}

// updatesQuery reads the updates after a cursor, for an owner.
type updatesQuery struct {
	Owner string
	After int
}

// updatesReply answers the updates query (Found false: the Work is not
// visible to the asker).
type updatesReply struct {
	Found   bool
	Updates []work.Update
}

// updateCarry is a Work's update state carried across continue-as-new in
// workInput.Carry: its log as plain data (work.UpdateLogState, restored
// with work.RestoreUpdateLog), when its open questions' wait began and
// how the last ones closed. The bounds (at most work.MaxUpdateBytesCeiling
// of payload, base64 in JSON) keep it below Temporal's payload limit.
type updateCarry struct {
	Log      work.UpdateLogState
	OpenedAt time.Time `json:",omitempty"`
	Answered bool      `json:",omitempty"`
}
