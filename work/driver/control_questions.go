package driver

import (
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// Questions is what a durable Work keeps of its child's questions beside
// its update log (UpdateLog, which holds the open ones): when the
// open questions' wait began (their timeout runs from it), how many times
// open questions were closed (a wait compares it to learn that they
// were), and how the last ones closed. Its JSON field names are the
// runners' stored state's. Its methods are deterministic (the caller
// gives the time and the log), so that a workflow replays them. The zero
// value is a Work that has asked nothing.
type Questions struct {
	OpenedAt time.Time `json:",omitzero"` // when the open questions' wait began
	Gen      int       // counts the closes of open questions
	Answered bool      // the last close was an answer (not a timeout)
}

// Report decides on an update the child of a Work in state reports, with
// l, the Work's log, at now: the log ends first (observe.UpdateRefusedEnding
// for anything but a repeat) when the Work is cancel-requested or
// terminal. It returns l.Accept's decision (its receipt, or its refusal
// reason), and opens true when the update is a question accepted while
// none was open: the caller then sets OpenedAt, once the acceptance is
// recorded.
func (q *Questions) Report(l *UpdateLog, state observe.State, key string, value []byte, question bool, now time.Time) (r UpdateReportReply, opens bool) {
	if state == work.StateCancelRequested || state.Terminal() {
		l.End()
	}
	wasOpen := len(l.Open()) > 0
	rec, reason := l.Accept(key, value, question, now)
	r = UpdateReportReply{Seq: rec.Seq, Duplicate: rec.Duplicate, Reason: reason}
	return r, reason == "" && !rec.Duplicate && question && !wasOpen
}

// Answer closes l's open questions as answered (guidance was accepted for
// the Work) and reports whether any was open (nothing changes when none
// was).
func (q *Questions) Answer(l *UpdateLog) bool {
	if len(l.Open()) == 0 {
		return false
	}
	l.Answered()
	q.Gen++
	q.Answered = true
	return true
}

// TimeOut closes l's open questions of generation gen unanswered (their
// wait gave up at their deadline) and reports closed true; when they were
// closed meanwhile (Gen moved on), nothing changes. answered is how the
// questions of gen closed.
func (q *Questions) TimeOut(l *UpdateLog, gen int) (answered, closed bool) {
	if q.Gen != gen {
		return q.Answered, false
	}
	l.Answered()
	q.Gen++
	q.Answered = false
	return false, true
}

// Deadline is when l's open questions' wait ends: OpenedAt plus the
// log's question timeout.
func (q *Questions) Deadline(l *UpdateLog) time.Time {
	return q.OpenedAt.Add(l.Policy().QuestionTimeout)
}
