package work

import (
	"time"
)

// Children that talk back: a Work whose Spec declares updates (Spec.Updates)
// can report bounded, ordered intermediate updates while it runs
// (ReportUpdate, or the agent child's automatic emit_update tool), and ask
// its supervisor a question (an update with Question set) that is answered
// with guidance at the child's next model-request boundary. Updates are
// child content: they reach the application through Updates and, only when
// the application opts in for that child, the coordinator's model through
// the application-level resume path; never telemetry, logs or the status
// block.

// The ceilings of UpdatePolicy's bounds.
const (
	maxUpdatesCeiling     = 1024    // UpdatePolicy.MaxUpdates at most
	maxUpdateBytesCeiling = 1 << 20 // UpdatePolicy.MaxBytes at most
)

// UpdatePolicy declares that a Work reports updates, and bounds them. The
// zero fields take the defaults; a negative field, or one over its
// ceiling (1,024 updates, 1 MiB), is ErrInvalidSpec.
type UpdatePolicy struct {
	MaxUpdates      int           // updates accepted per Work (0: 32; at most 1,024)
	MaxBytes        int           // total encoded payload per Work (0: 16 KiB; at most 1 MiB)
	QuestionTimeout time.Duration // a question's wait at the next boundary (0: 10 minutes)
}

// Update is one accepted update of a Work. Value is its encoded payload
// (JSON, as the child gave it): child content, for the application and
// (opted in) the coordinator only.
type Update struct {
	Seq      int       // 1, 2, ... per Work, in acceptance order
	Key      string    // its idempotency key
	Value    []byte    // the encoded payload
	Question bool      // the child asks its supervisor and waits for guidance
	Time     time.Time // when it was accepted
}

// UpdateReceipt is what an accepted update answers: its sequence number,
// and whether it was a repeat of an update already accepted with its key.
type UpdateReceipt struct {
	Seq       int
	Duplicate bool
}

// NoticeUpdate is the Kind of a Notice of one accepted update (Notice.Seq
// and Notice.Bytes say which and how large). It never pushes a settlement
// notice out of a full buffer.
const NoticeUpdate NoticeKind = NoticeApproval + 1

// The decision on each update a child reports is written once, for every
// engine, in work/internal/updatelog (work/driver's UpdateLog wraps it);
// its refusal reasons are observe's UpdateRefused* constants.

// validate returns ErrInvalidSpec for a negative field or one over its
// ceiling.
func (p *UpdatePolicy) validate() error {
	switch {
	case p.MaxUpdates < 0 || p.MaxBytes < 0 || p.QuestionTimeout < 0:
		return errorf(ErrInvalidSpec, "negative update bound")
	case p.MaxUpdates > maxUpdatesCeiling:
		return errorf(ErrInvalidSpec, "at most %d updates per work", maxUpdatesCeiling)
	case p.MaxBytes > maxUpdateBytesCeiling:
		return errorf(ErrInvalidSpec, "at most %d bytes of updates per work", maxUpdateBytesCeiling)
	}
	return nil
}
