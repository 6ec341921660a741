package work

import (
	"bytes"
	"encoding/json"
	"time"
)

// This file is contract logic (see contract.go): the decision on each
// update a child reports, written once for every engine. It is
// deterministic and starts no goroutine, so a durable engine's workflow
// can keep an UpdateLog as workflow state.

// Resolved returns p with its zero fields set to the defaults
// (32 updates, 16 KiB, 10 minutes). It
// does not check p: Spec.Validate refuses a negative or over-ceiling
// field.
func (p UpdatePolicy) Resolved() UpdatePolicy {
	if p.MaxUpdates == 0 {
		p.MaxUpdates = defaultMaxUpdates
	}
	if p.MaxBytes == 0 {
		p.MaxBytes = defaultMaxUpdateBytes
	}
	if p.QuestionTimeout == 0 {
		p.QuestionTimeout = defaultQuestionTimeout
	}
	return p
}

// validate returns ErrInvalidSpec for a negative field or one over its
// ceiling.
func (p *UpdatePolicy) validate() error {
	switch {
	case p.MaxUpdates < 0 || p.MaxBytes < 0 || p.QuestionTimeout < 0:
		return errorf(ErrInvalidSpec, "negative update bound")
	case p.MaxUpdates > MaxUpdatesCeiling:
		return errorf(ErrInvalidSpec, "at most %d updates per work", MaxUpdatesCeiling)
	case p.MaxBytes > MaxUpdateBytesCeiling:
		return errorf(ErrInvalidSpec, "at most %d bytes of updates per work", MaxUpdateBytesCeiling)
	}
	return nil
}

// UpdateLog is one Work's accepted updates, in order, and the decision on
// each new one: what an engine keeps for a Work whose Spec declares
// updates. The zero UpdateLog is not usable (NewUpdateLog); a nil
// *UpdateLog is the log of a Work that declares none: it refuses every
// update with UpdateRefusedNotDeclared and holds nothing. An UpdateLog is
// not safe for concurrent use: the engine guards it (the Supervisor with
// its lock, a durable engine as workflow state).
type UpdateLog struct {
	policy  UpdatePolicy
	updates []Update
	bytes   int
	keys    map[string]int // key -> index in updates
	ending  bool
	open    []int // the sequence numbers of the questions not yet answered
}

// NewUpdateLog returns an empty log bounded by p (Resolved).
func NewUpdateLog(p UpdatePolicy) *UpdateLog {
	return &UpdateLog{policy: p.Resolved()}
}

// Policy returns the log's bounds, defaults applied.
func (l *UpdateLog) Policy() UpdatePolicy {
	if l == nil {
		return UpdatePolicy{}
	}
	return l.policy
}

// End records that the Work is ending (cancel-requested or settling):
// every later update is refused with UpdateRefusedEnding. It is
// idempotent; the updates accepted stay readable.
func (l *UpdateLog) End() {
	if l != nil {
		l.ending = true
	}
}

// Accept decides on one update the child reports with key (its
// idempotency key: the tool-call id, or one the child chose) and value
// (its encoded payload, JSON), and records it when it is accepted, at
// now. It returns the receipt and "", or the refusal reason (an
// UpdateRefused* constant), checked in this order: not_declared (a nil
// log), invalid (an empty key or a value that is not valid JSON), a
// repeat of an accepted key (the same value and question: the first
// receipt with Duplicate set, even once the log is full or ending;
// another value, or a question where there was none: conflict), ending (End was called), count, bytes. A refused update
// changes nothing: an update is refused before it is accepted, never
// dropped after. An accepted question opens (Open) until Answered.
func (l *UpdateLog) Accept(key string, value []byte, question bool, now time.Time) (UpdateReceipt, string) {
	if l == nil {
		return UpdateReceipt{}, UpdateRefusedNotDeclared
	}
	if key == "" || !json.Valid(value) {
		return UpdateReceipt{}, UpdateRefusedInvalid
	}
	if i, ok := l.keys[key]; ok {
		u := &l.updates[i]
		if u.Question != question || !bytes.Equal(u.Value, value) {
			return UpdateReceipt{}, UpdateRefusedConflict
		}
		return UpdateReceipt{Seq: u.Seq, Duplicate: true}, ""
	}
	switch {
	case l.ending:
		return UpdateReceipt{}, UpdateRefusedEnding
	case len(l.updates) >= l.policy.MaxUpdates:
		return UpdateReceipt{}, UpdateRefusedCount
	case l.bytes+len(value) > l.policy.MaxBytes:
		return UpdateReceipt{}, UpdateRefusedBytes
	}
	seq := len(l.updates) + 1
	l.updates = append(l.updates, Update{Seq: seq, Key: key, Value: bytes.Clone(value), Question: question, Time: now})
	l.bytes += len(value)
	if l.keys == nil {
		l.keys = make(map[string]int)
	}
	l.keys[key] = seq - 1
	if question {
		l.open = append(l.open, seq)
	}
	return UpdateReceipt{Seq: seq}, ""
}

// After returns copies of the accepted updates with Seq > cursor, in
// order (an empty slice when there are none; a negative cursor reads from
// the start).
func (l *UpdateLog) After(cursor int) []Update {
	if l == nil || cursor >= len(l.updates) {
		return []Update{}
	}
	cursor = max(cursor, 0)
	out := make([]Update, len(l.updates)-cursor)
	for i, u := range l.updates[cursor:] {
		u.Value = bytes.Clone(u.Value)
		out[i] = u
	}
	return out
}

// Len returns how many updates were accepted, and Bytes their total
// encoded size.
func (l *UpdateLog) Len() int {
	if l == nil {
		return 0
	}
	return len(l.updates)
}

// Bytes returns the total encoded size of the accepted updates.
func (l *UpdateLog) Bytes() int {
	if l == nil {
		return 0
	}
	return l.bytes
}

// Open returns the sequence numbers of the questions accepted and not yet
// answered (nil when none is open). Questions do not queue: a question
// asked while another is open joins it, and one answer answers all.
func (l *UpdateLog) Open() []int {
	if l == nil || len(l.open) == 0 {
		return nil
	}
	return append([]int(nil), l.open...)
}

// Answered closes the open questions (guidance arrived for the Work, or
// their wait gave up) and returns their sequence numbers (nil when none
// was open).
func (l *UpdateLog) Answered() []int {
	if l == nil || len(l.open) == 0 {
		return nil
	}
	seqs := l.open
	l.open = nil
	return seqs
}

// UpdateLogState is an UpdateLog as plain data (JSON-encodable): what a
// durable engine carries across a workflow's continue-as-new or stores
// with the Work, and gives back to RestoreUpdateLog.
type UpdateLogState struct {
	Policy  UpdatePolicy `json:"policy"`
	Updates []Update     `json:"updates,omitempty"`
	Open    []int        `json:"open,omitempty"`
	Ending  bool         `json:"ending,omitempty"`
}

// State returns the log as plain data (copies: the log keeps its own).
func (l *UpdateLog) State() UpdateLogState {
	if l == nil {
		return UpdateLogState{}
	}
	var us []Update
	if len(l.updates) > 0 {
		us = l.After(0)
	}
	return UpdateLogState{Policy: l.policy, Updates: us, Open: l.Open(), Ending: l.ending}
}

// RestoreUpdateLog returns the log st describes: the same updates, keys,
// bytes, open questions and ending as the log State was taken from, so
// that it decides every later update as that log would have.
func RestoreUpdateLog(st UpdateLogState) *UpdateLog {
	l := NewUpdateLog(st.Policy)
	for _, u := range st.Updates {
		l.updates = append(l.updates, Update{Seq: len(l.updates) + 1, Key: u.Key, Value: bytes.Clone(u.Value),
			Question: u.Question, Time: u.Time})
		l.bytes += len(u.Value)
		if l.keys == nil {
			l.keys = make(map[string]int)
		}
		l.keys[u.Key] = len(l.updates) - 1
	}
	l.open = append([]int(nil), st.Open...)
	l.ending = st.Ending
	return l
}
