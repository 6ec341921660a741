package driver

import (
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/internal/updatelog"
)

// UpdateLog is one Work's accepted updates, in order, and the decision on
// each new one: what an engine keeps for a Work whose Spec declares
// updates. The rule is the in-process engine's own (one implementation, in
// work/internal/updatelog). The zero UpdateLog accepts nothing
// (NewUpdateLog); a nil *UpdateLog is the log of a Work that declares
// none: it refuses every update with observe.UpdateRefusedNotDeclared and
// holds nothing. An UpdateLog is not safe for concurrent use: the engine
// guards it (a durable engine keeps it as workflow state). It is
// deterministic and starts no goroutine.
type UpdateLog struct{ l updatelog.Log }

// ResolveUpdates returns p with its zero fields set to the defaults (32
// updates, 16 KiB, 10 minutes). It does not check p: work.Spec.Validate
// refuses a negative or over-ceiling field.
func ResolveUpdates(p work.UpdatePolicy) work.UpdatePolicy {
	return work.UpdatePolicy(updatelog.Resolve(updatelog.Policy(p)))
}

// NewUpdateLog returns an empty log bounded by p (as ResolveUpdates
// resolves it).
func NewUpdateLog(p work.UpdatePolicy) *UpdateLog {
	return &UpdateLog{updatelog.Make(updatelog.Policy(p))}
}

// RestoreUpdateLog returns the log st describes: the same updates, keys,
// bytes, open questions and ending as the log State was taken from, so
// that it decides every later update as that log would have.
func RestoreUpdateLog(st UpdateLogState) *UpdateLog {
	return &UpdateLog{*updatelog.Restore(updatelog.State{Policy: updatelog.Policy(st.Policy),
		Updates: updatelog.As[updatelog.Update](st.Updates), Open: st.Open, Ending: st.Ending})}
}

// in is the wrapped log, nil for a nil l.
func (l *UpdateLog) in() *updatelog.Log {
	if l == nil {
		return nil
	}
	return &l.l
}

// Policy returns the log's bounds, defaults applied (the zero
// UpdatePolicy for a nil log).
func (l *UpdateLog) Policy() work.UpdatePolicy { return work.UpdatePolicy(l.in().Policy()) }

// End records that the Work is ending (cancel-requested or settling):
// every later update is refused with observe.UpdateRefusedEnding. It is
// idempotent; the updates accepted stay readable.
func (l *UpdateLog) End() { l.in().End() }

// Accept decides on one update the child reports with key (its
// idempotency key: the tool-call id, or one the child chose) and value
// (its encoded payload, JSON), and records it when it is accepted, at
// now. It returns the receipt and "", or the refusal reason (a
// work.UpdateRefused* constant), checked in this order: not_declared (a
// nil log), invalid (an empty key or a value that is not valid JSON), a
// repeat of an accepted key (the same value and question: the first
// receipt with Duplicate set, even once the log is full or ending;
// another value, or a question where there was none: conflict), ending
// (End was called), count, bytes. A refused update changes nothing: an
// update is refused before it is accepted, never dropped after. An
// accepted question opens (Open) until Answered.
func (l *UpdateLog) Accept(key string, value []byte, question bool, now time.Time) (work.UpdateReceipt, string) {
	r, reason := l.in().Accept(key, value, question, now)
	return work.UpdateReceipt(r), reason
}

// After returns copies of the accepted updates with Seq > cursor, in
// order (an empty slice when there are none; a negative cursor reads from
// the start).
func (l *UpdateLog) After(cursor int) []work.Update {
	return updatelog.After[work.Update](l.in(), cursor)
}

// Len returns how many updates were accepted.
func (l *UpdateLog) Len() int { return l.in().Len() }

// Bytes returns the total encoded size of the accepted updates.
func (l *UpdateLog) Bytes() int { return l.in().Bytes() }

// Open returns the sequence numbers of the questions accepted and not yet
// answered (nil when none is open). Questions do not queue: a question
// asked while another is open joins it, and one answer answers all.
func (l *UpdateLog) Open() []int { return l.in().Open() }

// Answered closes the open questions (guidance arrived for the Work, or
// their wait gave up) and returns their sequence numbers (nil when none
// was open).
func (l *UpdateLog) Answered() []int { return l.in().Answered() }

// UpdateLogState is an UpdateLog as plain data (JSON-encodable): what a
// durable engine carries across a workflow's continue-as-new or stores
// with the Work, and gives back to RestoreUpdateLog. Its encoding is the
// one work.UpdateLogState had, so state stored before the log moved here
// restores unchanged.
type UpdateLogState struct {
	Policy  work.UpdatePolicy `json:"policy"`
	Updates []work.Update     `json:"updates,omitempty"`
	Open    []int             `json:"open,omitempty"`
	Ending  bool              `json:"ending,omitempty"`
}

// State returns the log as plain data (copies: the log keeps its own).
func (l *UpdateLog) State() UpdateLogState {
	st := l.in().State()
	return UpdateLogState{Policy: work.UpdatePolicy(st.Policy), Updates: updatelog.As[work.Update](st.Updates),
		Open: st.Open, Ending: st.Ending}
}
