package driver

import (
	"time"

	"github.com/agentwork/agentwork/work"
)

// UpdateReport is one update a child reports to its Work's state (wire
// format: JSON; a Temporal history holds it once accepted): its
// idempotency key, its encoded payload (JSON) and whether it asks a
// question.
type UpdateReport struct {
	Key      string
	Value    []byte
	Question bool `json:",omitempty"`
}

// UpdateReportReply is the Work's decision on an UpdateReport (its
// UpdateLog decides): the receipt, or the refusal reason.
type UpdateReportReply struct {
	Seq       int
	Duplicate bool   `json:",omitempty"`
	Reason    string `json:",omitempty"`
}

// UpdatesQuery reads a Work's updates, or their metadata, after a cursor
// for an owner.
type UpdatesQuery struct {
	Owner string
	After int
}

// UpdatesReply answers a read of a Work's updates (an UpdatesQuery):
// Found is false when the Work is not visible to the owner.
type UpdatesReply struct {
	Found   bool
	Updates []work.Update
}

// UpdateMeta is what an update notice says of one accepted update: its
// sequence number, its value's size and when it was accepted, never the
// value. A durable engine answers it from the Work's own state (a
// Temporal query, a Restate shared handler), so that the poller of a
// Subscription never carries an update's value out of the engine.
type UpdateMeta struct {
	Seq   int
	Bytes int
	Time  time.Time
}

// UpdateMetaReply answers a read of a Work's update metadata after a
// cursor for an owner: Found is false when the Work is not visible to
// that owner (another's, detached or gone).
type UpdateMetaReply struct {
	Found   bool
	Updates []UpdateMeta
}

// UpdateMetas returns the metadata of us, in order (an empty slice for
// none).
func UpdateMetas(us []work.Update) []UpdateMeta {
	out := make([]UpdateMeta, len(us))
	for i, u := range us {
		out[i] = UpdateMeta{Seq: u.Seq, Bytes: len(u.Value), Time: u.Time}
	}
	return out
}

// publishUpdates publishes a work.NoticeUpdate of r's Work for each of
// ms, in order, and returns the last sequence number published (seen
// when ms is empty): an UpdateNotices once it has read ms.
func publishUpdates(r Record, ms []UpdateMeta, seen int, publish func(work.Notice)) int {
	for _, u := range ms {
		publish(work.Notice{Kind: work.NoticeUpdate, WorkID: r.ID, Target: r.Label, State: r.State,
			Seq: u.Seq, Bytes: u.Bytes, Time: u.Time})
		seen = u.Seq
	}
	return seen
}
