package temporal

import (
	"time"

	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// Names of the updates and queries of children that talk back (updates
// and questions): part of the wire format, as those in wire.go.
const (
	updateReport             = "report"       // an update the child reports (from its attempt)
	updateAwait              = "await-answer" // the wait of the child's open questions (from its attempt)
	queryUpdates             = "updates"      // the accepted updates after a cursor (Engine.Updates)
	queryUpdateMap           = "update-sizes" // their sequence numbers, sizes and times (the notices)
	updateRefusedUnavailable = observe.UpdateRefusedUnavailable
)

// updateCarry is a Work's update state carried across continue-as-new in
// workInput.Carry: its log as plain data (driver.UpdateLogState, restored
// with driver.RestoreUpdateLog), when its open questions' wait began and
// how the last ones closed. The bounds (at most 1 MiB
// of payload, base64 in JSON) keep it below Temporal's payload limit.
type updateCarry struct {
	Log      driver.UpdateLogState
	OpenedAt time.Time `json:",omitempty"`
	Answered bool      `json:",omitempty"`
}
