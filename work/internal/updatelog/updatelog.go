// Package updatelog is the one rule of the updates a child reports: one
// Work's accepted updates, in order, and the decision on each new one,
// written once for the in-process engine (package work) and for the durable
// engines (work/driver's UpdateLog, which wraps a Log). It is deterministic
// and starts no goroutine, so that a durable engine's workflow can keep a
// Log as workflow state.
//
// Its types have the shapes of work's UpdatePolicy, Update and
// UpdateReceipt (which convert to and from them), and its refusal
// reasons are observe's UpdateRefused* constants, so that neither is
// written twice.
package updatelog

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/agentwork/agentwork/work/observe"
)

// Policy has the shape of work.UpdatePolicy.
type Policy struct {
	MaxUpdates      int
	MaxBytes        int
	QuestionTimeout time.Duration
}

// Update has the shape of work.Update.
type Update struct {
	Seq      int
	Key      string
	Value    []byte
	Question bool
	Time     time.Time
}

// Receipt has the shape of work.UpdateReceipt.
type Receipt struct {
	Seq       int
	Duplicate bool
}

// Like is the shape of an Update: work.Update and Update satisfy it, and
// As converts between them.
type Like interface {
	~struct {
		Seq      int
		Key      string
		Value    []byte
		Question bool
		Time     time.Time
	}
}

// As returns us converted, element by element, to V (nil for nil).
func As[V, U Like](us []U) []V {
	if us == nil {
		return nil
	}
	out := make([]V, len(us))
	for i, u := range us {
		out[i] = V(u)
	}
	return out
}

// The defaults of a Policy's zero fields.
const (
	DefaultMaxUpdates      = 32
	DefaultMaxBytes        = 16 << 10
	DefaultQuestionTimeout = 10 * time.Minute
)

// Resolve returns p with its zero fields set to the defaults. It does not
// check p.
func Resolve(p Policy) Policy {
	if p.MaxUpdates == 0 {
		p.MaxUpdates = DefaultMaxUpdates
	}
	if p.MaxBytes == 0 {
		p.MaxBytes = DefaultMaxBytes
	}
	if p.QuestionTimeout == 0 {
		p.QuestionTimeout = DefaultQuestionTimeout
	}
	return p
}

// Log is one Work's accepted updates and the decision on each new one.
// The zero Log decides with the zero Policy (it accepts nothing: Make
// gives a usable one); a nil *Log is the log of a Work that declares no
// updates: it refuses every update as not declared and holds nothing. A
// Log is not safe for concurrent use.
type Log struct {
	policy  Policy
	updates []Update
	bytes   int
	keys    map[string]int // key -> index in updates
	ending  bool
	open    []int // the sequence numbers of the questions not yet answered
}

// Make returns an empty log bounded by p (Resolve).
func Make(p Policy) Log { return Log{policy: Resolve(p)} }

// Policy returns the log's bounds, defaults applied.
func (l *Log) Policy() Policy {
	if l == nil {
		return Policy{}
	}
	return l.policy
}

// End records that the Work is ending: every later update is refused as
// ending. It is idempotent; the updates accepted stay readable.
func (l *Log) End() {
	if l != nil {
		l.ending = true
	}
}

// Accept decides on one update (work/driver's UpdateLog.Accept documents
// the order of the checks) and records it when it is accepted, at now. It
// returns the receipt and "", or the refusal reason.
func (l *Log) Accept(key string, value []byte, question bool, now time.Time) (Receipt, string) {
	if l == nil {
		return Receipt{}, observe.UpdateRefusedNotDeclared
	}
	if key == "" || !json.Valid(value) {
		return Receipt{}, observe.UpdateRefusedInvalid
	}
	if i, ok := l.keys[key]; ok {
		u := &l.updates[i]
		if u.Question != question || !bytes.Equal(u.Value, value) {
			return Receipt{}, observe.UpdateRefusedConflict
		}
		return Receipt{Seq: u.Seq, Duplicate: true}, ""
	}
	switch {
	case l.ending:
		return Receipt{}, observe.UpdateRefusedEnding
	case len(l.updates) >= l.policy.MaxUpdates:
		return Receipt{}, observe.UpdateRefusedCount
	case l.bytes+len(value) > l.policy.MaxBytes:
		return Receipt{}, observe.UpdateRefusedBytes
	}
	l.add(Update{Seq: len(l.updates) + 1, Key: key, Value: bytes.Clone(value), Question: question, Time: now})
	if question {
		l.open = append(l.open, len(l.updates))
	}
	return Receipt{Seq: len(l.updates)}, ""
}

// add appends u (its Seq the next one, its Value the log's own).
func (l *Log) add(u Update) {
	l.updates = append(l.updates, u)
	l.bytes += len(u.Value)
	if l.keys == nil {
		l.keys = make(map[string]int)
	}
	l.keys[u.Key] = len(l.updates) - 1
}

// After returns copies of the accepted updates with Seq > cursor, in
// order, as V (an empty slice when there are none; a negative cursor
// reads from the start).
func After[V Like](l *Log, cursor int) []V {
	if l == nil || cursor >= len(l.updates) {
		return []V{}
	}
	cursor = max(cursor, 0)
	out := make([]V, len(l.updates)-cursor)
	for i, u := range l.updates[cursor:] {
		u.Value = bytes.Clone(u.Value)
		out[i] = V(u)
	}
	return out
}

// Len returns how many updates were accepted.
func (l *Log) Len() int {
	if l == nil {
		return 0
	}
	return len(l.updates)
}

// Bytes returns the total encoded size of the accepted updates.
func (l *Log) Bytes() int {
	if l == nil {
		return 0
	}
	return l.bytes
}

// Open returns the sequence numbers of the questions accepted and not yet
// answered (nil when none is open).
func (l *Log) Open() []int {
	if l == nil || len(l.open) == 0 {
		return nil
	}
	return append([]int(nil), l.open...)
}

// Answered closes the open questions and returns their sequence numbers
// (nil when none was open).
func (l *Log) Answered() []int {
	if l == nil || len(l.open) == 0 {
		return nil
	}
	seqs := l.open
	l.open = nil
	return seqs
}

// State is a Log as plain data (work/driver's UpdateLogState is its
// stored form).
type State struct {
	Policy  Policy
	Updates []Update
	Open    []int
	Ending  bool
}

// State returns the log as plain data (copies: the log keeps its own).
func (l *Log) State() State {
	if l == nil {
		return State{}
	}
	var us []Update
	if len(l.updates) > 0 {
		us = After[Update](l, 0)
	}
	return State{Policy: l.policy, Updates: us, Open: l.Open(), Ending: l.ending}
}

// Restore returns the log st describes: the same updates, keys, bytes,
// open questions and ending as the log State was taken from, so that it
// decides every later update as that log would have.
func Restore(st State) *Log {
	l := Make(st.Policy)
	for _, u := range st.Updates {
		l.add(Update{Seq: len(l.updates) + 1, Key: u.Key, Value: bytes.Clone(u.Value), Question: u.Question, Time: u.Time})
	}
	l.open = append([]int(nil), st.Open...)
	l.ending = st.Ending
	return &l
}
