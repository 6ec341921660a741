package work

import (
	"encoding/json"
	"time"

	"github.com/agentwork/agentwork/work/observe"
)

// timeFormat is the ISO-8601 UTC form of every timestamp in the
// model-facing values, with millisecond precision (as JavaScript's
// Date.prototype.toISOString writes it).
const timeFormat = "2006-01-02T15:04:05.000Z"

func isoTime(t time.Time) string { return t.UTC().Format(timeFormat) }

// Ref identifies one Work. It is an immutable value: its kind is a
// constant, its guarantees depend only on Durable, and its JSON encoding is
// exactly
//
//	{"kind":"work.ref","id":"...","targetId":"...",
//	 "guarantees":{"execution":"process-local","rejoin":"process-local"}}
//
// with "durable" for both guarantees when Durable is set.
type Ref struct {
	ID       string // 128-bit random id, 32 lowercase hex digits
	TargetID string // the target's id (Target.ID, or its label when unset)
	// Durable is set by an Engine whose Work survives the loss of the
	// process that started it or runs it (a durable runner); the
	// in-process engine never sets it.
	Durable bool
}

// guarantees is the guarantee pair of a Ref's JSON.
type guarantees struct {
	Execution string `json:"execution"`
	Rejoin    string `json:"rejoin"`
}

// kind returns "work.ref".
func (Ref) kind() string { return "work.ref" }

// guarantees returns {process-local, process-local}: execution and rejoin
// are both bound to this process; or {durable, durable} when r.Durable is
// set.
func (r Ref) guarantees() guarantees {
	if r.Durable {
		return guarantees{Execution: "durable", Rejoin: "durable"}
	}
	return guarantees{Execution: "process-local", Rejoin: "process-local"}
}

// MarshalJSON encodes the exact Ref contract.
func (r Ref) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Kind       string     `json:"kind"`
		ID         string     `json:"id"`
		TargetID   string     `json:"targetId"`
		Guarantees guarantees `json:"guarantees"`
	}{r.kind(), r.ID, r.TargetID, r.guarantees()})
}

// Status is the result-free projection of one Work, as list and status
// return it. It never carries a result or failure payload. Zero StartedAt
// and FinishedAt mean "does not apply" and are omitted from the JSON.
type Status struct {
	Work            Ref
	TargetLabel     string // the authored tool-map key
	State           observe.State
	Attempt         int // attempts to run it; 0 reads as 1 (a durable Engine counts retries)
	CreatedAt       time.Time
	StartedAt       time.Time // zero until running
	FinishedAt      time.Time // zero until terminal
	ResultAvailable bool      // completed, with its output held
	// ResultRead reports that Result has returned the output. Like
	// Progress it is for the application only: the JSON has neither.
	ResultRead bool
	// Waiting reports an external job (Spec.Job) that was submitted and
	// waits for its result: its state is running, and it holds no running
	// slot. For the application only: the JSON does not have it.
	Waiting  bool
	Progress observe.Progress // the child's progress counts so far
	// BudgetExhausted names the budget that ran out (Budget* constants),
	// or is "". A completed Work with it set holds a partial result. Like
	// the usage it is for the application: the JSON does not have it.
	BudgetExhausted string
	// Class says why a terminal Work did not complete: for failed Work its
	// failure class (ClassError, ClassPanic, ClassDeadline,
	// ClassResultTooLarge, ClassBudgetExhausted, or an Engine's own such as
	// ClassWorkerLost), for cancelled Work ClassCancelled (ClassDenied or
	// ClassApprovalTimeout for Work that never got its approval); "" for completed
	// and unfinished Work. It is the ErrorClass of the Work's terminal event
	// (what telemetry records as error.type), never error text. For the
	// application only: the JSON does not have it.
	Class string
	// AwaitingApproval reports a queued Work held for its approval
	// (Spec.NeedsApproval): out of the dispatch queue, holding no slot.
	// For the application only: the JSON says queued.
	AwaitingApproval bool
}

// MarshalJSON encodes the exact WorkStatus contract: attachment is always
// "attached" and attempt is Attempt (1 when 0); timestamps are ISO-8601 UTC and appear
// only when they apply.
func (s Status) MarshalJSON() ([]byte, error) {
	type status struct {
		Work            Ref           `json:"work"`
		TargetLabel     string        `json:"targetLabel"`
		State           observe.State `json:"state"`
		Attachment      string        `json:"attachment"`
		Attempt         int           `json:"attempt"`
		CreatedAt       string        `json:"createdAt"`
		StartedAt       string        `json:"startedAt,omitempty"`
		FinishedAt      string        `json:"finishedAt,omitempty"`
		ResultAvailable bool          `json:"resultAvailable"`
	}
	v := status{Work: s.Work, TargetLabel: s.TargetLabel, State: s.State,
		Attachment: "attached", Attempt: max(s.Attempt, 1), CreatedAt: isoTime(s.CreatedAt),
		ResultAvailable: s.ResultAvailable}
	if !s.StartedAt.IsZero() {
		v.StartedAt = isoTime(s.StartedAt)
	}
	if !s.FinishedAt.IsZero() {
		v.FinishedAt = isoTime(s.FinishedAt)
	}
	return json.Marshal(v)
}

// CancelReceipt answers a cancel request. Accepted is false only for Work
// that was already terminal; State is the state after the request.
type CancelReceipt struct {
	WorkID     string
	Accepted   bool
	State      observe.State
	AcceptedAt time.Time
}

// MarshalJSON encodes {workId, accepted, state, acceptedAt}.
func (c CancelReceipt) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		WorkID     string        `json:"workId"`
		Accepted   bool          `json:"accepted"`
		State      observe.State `json:"state"`
		AcceptedAt string        `json:"acceptedAt"`
	}{c.WorkID, c.Accepted, c.State, isoTime(c.AcceptedAt)})
}

// SendReceipt answers an accepted guidance message. ID names the message,
// Cursor is its 1-based position in the Work's guidance sequence.
type SendReceipt struct {
	WorkID     string
	ID         string
	Cursor     string
	AcceptedAt time.Time
}

// MarshalJSON encodes {workId, id, cursor, acceptedAt, outcome:"accepted"}.
func (r SendReceipt) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		WorkID     string `json:"workId"`
		ID         string `json:"id"`
		Cursor     string `json:"cursor"`
		AcceptedAt string `json:"acceptedAt"`
		Outcome    string `json:"outcome"`
	}{r.WorkID, r.ID, r.Cursor, isoTime(r.AcceptedAt), "accepted"})
}

// DetachReceipt answers a detach: {id, detached:true}.
type DetachReceipt struct{ ID string }

// MarshalJSON encodes {id, detached:true}.
func (d DetachReceipt) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ID       string `json:"id"`
		Detached bool   `json:"detached"`
	}{d.ID, true})
}
