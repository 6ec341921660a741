package driver

import (
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// WorkState is what a durable Work's own state machine keeps of its
// lifecycle (a Temporal workflow's memory, a Restate control object's
// stored state; its JSON names are the stored state's), with the
// decisions both runners make on it written once: Record, Cancel and
// Settle. Its methods are deterministic (the caller gives the time), so
// that a workflow replays them.
type WorkState struct {
	State     observe.State
	Attempt   int
	Started   time.Time `json:",omitzero"`
	Finished  time.Time `json:",omitzero"`
	HasResult bool      `json:",omitempty"`
	Detached  bool      `json:",omitempty"`
	// Rev is the revision of the last record made for the registry.
	Rev int64
	// Class is a failed Work's class, or a cancelled one's when it is not
	// work.ClassCancelled (denied, its approval timed out); "" otherwise.
	Class    string           `json:",omitempty"`
	Budget   string           `json:",omitempty"` // the budget that ran out, if one did
	Progress observe.Progress `json:",omitzero"`
	// Spent is what the last attempt spent; nil: unknown (its process
	// died), or nothing ran yet.
	Spent    *observe.Usage `json:",omitempty"`
	Waiting  bool           `json:",omitempty"` // an external job between its submit and its result
	Awaiting bool           `json:",omitempty"` // queued, awaiting its approval
	Updates  int            `json:",omitempty"` // the updates it accepted
	// Enqueued is when it joined the dispatch queue, approved (zero: at
	// its creation, or not yet).
	Enqueued time.Time `json:",omitzero"`
}

// AwaitsApproval reports whether the Work is queued, awaiting its
// approval (an answer, a cancel or its timeout ends the wait).
func (s *WorkState) AwaitsApproval() bool { return s.Awaiting && s.State == work.StateQueued }

// AwaitsApprovalFor reports whether the Work, owner's, awaits its
// approval (AwaitsApproval) and r may read or answer it: a request of
// its owner while it is not detached, or of the approver role.
func (s *WorkState) AwaitsApprovalFor(owner string, r AnswerRequest) bool {
	return s.AwaitsApproval() && (r.Approver || r.Owner == owner && !s.Detached)
}

// Approve ends the Work's wait for its approval at now: it joins the
// dispatch queue, and its queue wait counts from now (Start).
func (s *WorkState) Approve(now time.Time) { s.Awaiting, s.Enqueued = false, now }

// Start begins attempt (the runner decided that it runs) of a Work
// created at created, at now: it is running, and started at now unless
// an earlier attempt started it. For its first start it returns first
// true and the event of its transition from queued (Transition's; its
// QueueWait from when it joined the dispatch queue: Enqueued, else
// created).
func (s *WorkState) Start(attempt int, created, now time.Time) (ev observe.Event, first bool) {
	s.Attempt = attempt
	if first = s.Started.IsZero(); first {
		s.Started = now
		from := s.Enqueued
		if from.IsZero() {
			from = created
		}
		ev = Transition(work.StateQueued, work.StateRunning, observe.Event{Time: now, QueueWait: since(from, now)})
	}
	s.State = work.StateRunning
	return ev, first
}

// Record is s's record of Work id for its owner's registry, at revision
// s.Rev: a cancelled Work with no class of its own has
// work.ClassCancelled, and what it spent is told once it is terminal (a
// Work cancelled before it ran spent nothing).
func (s *WorkState) Record(id string) Record {
	class := s.Class
	if s.State == work.StateCancelled && class == "" {
		class = work.ClassCancelled
	}
	var spent *observe.Usage
	if s.State.Terminal() {
		spent = s.Spent
		if spent == nil && s.Attempt == 0 {
			spent = &observe.Usage{}
		}
	}
	return Record{ID: id, State: s.State, Rev: s.Rev, Attempt: max(s.Attempt, 1), Started: s.Started,
		Finished: s.Finished, HasResult: s.HasResult, Detached: s.Detached, Budget: s.Budget, Class: class,
		Progress: s.Progress, Spent: spent, Waiting: s.Waiting && !s.State.Terminal(),
		Approval: s.AwaitsApproval(), Updates: s.Updates}
}

// Cancel decides a cancel at now (work.Engine.Cancel) of a Work created
// at created and returns the state it found, the event of the transition
// it made (the zero Event when it made none) and the decision: queued
// Work is cancelled (finished now; the event's Duration is from created),
// running Work becomes cancel-requested, cancel-requested Work stays so
// (accepted again), terminal Work is refused and nothing changes. The
// runner does what follows: the event, the attempt's stop, the mailbox's
// drop, the registry's record.
func (s *WorkState) Cancel(created, now time.Time) (from observe.State, ev observe.Event, r CancelReply) {
	from = s.State
	switch from {
	case work.StateQueued:
		s.State, s.Finished = work.StateCancelled, now
		ev = Transition(from, s.State, observe.Event{Time: now, Duration: since(created, now)})
	case work.StateRunning:
		s.State = work.StateCancelRequested
		ev = Transition(from, s.State, observe.Event{Time: now})
	case work.StateCancelRequested:
	default:
		return from, ev, CancelReply{State: from, At: now}
	}
	return from, ev, CancelReply{Accepted: true, State: s.State, At: now}
}

// Spend keeps what the Work's last attempt ended with: the budget that
// ran out ("": none), its last progress counts and what it spent (nil:
// unknown). It returns the events that report them at now, as
// in-process before the terminal event: observe.EventBudgetExhausted, then
// observe.EventUsage (none for a usage unknown or zero).
func (s *WorkState) Spend(budget string, p observe.Progress, spent *observe.Usage, now time.Time) []observe.Event {
	s.Budget, s.Progress, s.Spent = budget, p, spent
	var evs []observe.Event
	if budget != "" {
		evs = append(evs, observe.Event{Type: observe.EventBudgetExhausted, Budget: budget, Time: now})
	}
	if spent != nil && *spent != (observe.Usage{}) {
		evs = append(evs, observe.Event{Type: observe.EventUsage, Usage: *spent, Time: now})
	}
	return evs
}

// Settle ends a Work created at created in state with class (its
// terminal state and class: Settlement's, or a queued Work's cancel with
// a class of its own) at now, and returns the event of its transition
// (Transition's; its Duration from its start, or from created when it
// never started; bytes, the output's size, for a completed Work or one
// whose result was too large), or changed false when it was in state
// already (then no event, and its class is kept unless it failed). It is
// finished (at now, unless it was already), has a result when it
// completed, and keeps class.
func (s *WorkState) Settle(state observe.State, class string, bytes int, created, now time.Time) (ev observe.Event, changed bool) {
	from := s.State
	if changed = from != state; changed {
		s.State, s.Finished = state, now
		start := s.Started
		if start.IsZero() {
			start = created
		}
		ev = observe.Event{Time: now, Duration: since(start, now), ErrorClass: class}
		if state == work.StateCompleted || class == work.ClassResultTooLarge {
			ev.Bytes = bytes
		}
		ev = Transition(from, state, ev)
	}
	if s.Finished.IsZero() {
		s.Finished = now
	}
	s.HasResult = state == work.StateCompleted
	if changed || state == work.StateFailed {
		s.Class = class
	}
	return ev, changed
}

// since is the duration from t to now, 0 for a zero t or a t after now.
func since(t, now time.Time) time.Duration {
	if t.IsZero() {
		return 0
	}
	return max(now.Sub(t), 0)
}

// Settlement is the terminal state and class of a Work whose last
// attempt ended with class ("": it completed): an attempt ended by a
// cancel is cancelled when one was requested, else failed as
// work.ClassError (nothing the contract knows cancelled it); any other
// class fails the Work with it.
func Settlement(class string, cancelRequested bool) (observe.State, string) {
	switch {
	case class == "":
		return work.StateCompleted, ""
	case class == work.ClassCancelled && cancelRequested:
		return work.StateCancelled, ""
	case class == work.ClassCancelled:
		return work.StateFailed, work.ClassError
	}
	return work.StateFailed, class
}
