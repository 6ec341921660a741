package restate

import (
	"cmp"
	"time"

	restate "github.com/restatedev/sdk-go"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// Children that talk back, as the package doc says: a Work's updates and
// questions are its control object's state; the child's wait polls its
// shared question handler.

const (
	hReport    = "Report"
	hQuestion  = "Question"
	hQTimedOut = "QuestionTimeout"
	hUpdates   = "Updates"
	hSizes     = "UpdateSizes" // the updates' sequence numbers, sizes and times (the notices)
)

// updState is a Work's updates and questions (nil: none declared).
type updState struct {
	Log driver.UpdateLogState
	driver.Questions
}

// questionView is the child's view of its open question.
type questionView struct {
	Open, Answered, Ended bool
	Gen                   int
	Deadline              time.Time
}

// report decides on one update with the Work's log (driver.UpdateLog:
// order, idempotency, bounds, ending) and reports it (EventUpdate). The
// log decides on the plaintext: sealed values (WithContentKeys) are
// opened for it, and stored as they came, sealed; values the key ring
// cannot open refuse the update (unavailable: nothing is accepted).
func (c control) report(ctx restate.ObjectContext, r driver.UpdateReport) (driver.UpdateReportReply, error) {
	s, ok := load(ctx)
	if !ok || s.Upd == nil {
		return driver.UpdateReportReply{Reason: observe.UpdateRefusedNotDeclared}, nil
	}
	if s.State.Terminal() {
		return driver.UpdateReportReply{Reason: observe.UpdateRefusedEnding}, nil // no event after the terminal one
	}
	plain, err := c.openLog(s.In.ID, s.Upd.Log)
	value, verr := c.ring.openBytes(s.In.ID, fieldUpdate, r.Value)
	if err = cmp.Or(err, verr); err != nil {
		c.log.Error("restate: a Work's update values cannot be decrypted", "work", s.In.ID, "error", err.Error())
		reason := observe.UpdateRefusedUnavailable
		c.rep.emit(s.In, observe.Event{Type: observe.EventUpdate, Bytes: plainLenBytes(r.Value), Question: r.Question, ErrorClass: reason, Time: now(ctx)})
		return driver.UpdateReportReply{Reason: reason}, nil
	}
	log := driver.RestoreUpdateLog(plain)
	t := now(ctx)
	reply, opens := s.Upd.Report(log, s.State, r.Key, value, r.Question, t)
	if reply.Reason == "" && reply.Duplicate {
		return reply, nil
	}
	c.rep.emit(s.In, observe.Event{Type: observe.EventUpdate, Seq: reply.Seq, Bytes: len(value), Question: r.Question, ErrorClass: reply.Reason, Time: t})
	if reply.Reason != "" {
		return reply, nil
	}
	s.Upd.Log = storedLog(log.State(), s.Upd.Log, r.Value)
	s.Updates = log.Len()
	c.record(ctx, s)
	if opens {
		// The wait runs from the acceptance's end (the registry has the
		// count; the receipt goes out now), not from before the record.
		s.Upd.OpenedAt = now(ctx)
		restate.Set(ctx, stateKey, s)
	}
	return reply, nil
}

// openLog returns a stored log with its values opened (WithContentKeys).
func (c control) openLog(id string, st driver.UpdateLogState) (driver.UpdateLogState, error) {
	if len(st.Updates) == 0 {
		return st, nil
	}
	us := make([]work.Update, len(st.Updates))
	for i, u := range st.Updates {
		v, err := c.ring.openBytes(id, fieldUpdate, u.Value)
		if err != nil {
			return driver.UpdateLogState{}, err
		}
		u.Value = v
		us[i] = u
	}
	st.Updates = us
	return st, nil
}

// storedLog is the log to store after an accepted update: st (the log
// that decided, on plaintext) with the values as they were stored
// (before) and the new one's as it came (value): sealed, when the Worker
// sealed them. The log only ever appends.
func storedLog(st, before driver.UpdateLogState, value []byte) driver.UpdateLogState {
	for i := range st.Updates {
		if i < len(before.Updates) {
			st.Updates[i].Value = before.Updates[i].Value
		} else {
			st.Updates[i].Value = value
		}
	}
	return st
}

// answerQuestions closes the open questions: guidance arrived.
func (s *controlState) answerQuestions() {
	if s.Upd == nil {
		return
	}
	if log := driver.RestoreUpdateLog(s.Upd.Log); s.Upd.Answer(log) {
		s.Upd.Log = log.State()
	}
}

// question is the child's view of its open questions (a shared handler).
func (c control) question(ctx restate.ObjectSharedContext, _ restate.Void) (questionView, error) {
	s, ok := load(ctx)
	if !ok || s.Upd == nil {
		return questionView{Ended: true}, nil
	}
	log := driver.RestoreUpdateLog(s.Upd.Log)
	return questionView{Open: len(log.Open()) > 0, Answered: s.Upd.Answered, Ended: s.State.Terminal(), Gen: s.Upd.Gen,
		Deadline: s.Upd.Deadline(log)}, nil
}

// questionTimedOut closes the open questions of generation gen, unanswered
// (their wait gave up at their deadline); it answers whether they were
// answered meanwhile.
func (c control) questionTimedOut(ctx restate.ObjectContext, gen int) (bool, error) {
	s, ok := load(ctx)
	if !ok || s.Upd == nil {
		return false, nil
	}
	log := driver.RestoreUpdateLog(s.Upd.Log)
	answered, closed := s.Upd.TimeOut(log, gen)
	if closed {
		s.Upd.Log = log.State()
		restate.Set(ctx, stateKey, s)
	}
	return answered, nil
}

// updates reads the Work's updates after a cursor for its owner (a
// shared handler): readable after the Work ended.
func (c control) updates(ctx restate.ObjectSharedContext, q driver.UpdatesQuery) (driver.UpdatesReply, error) {
	us, found := visibleUpdates(ctx, q)
	return driver.UpdatesReply{Found: found, Updates: us}, nil
}

// updateSizes reads the metadata of the Work's updates after a cursor for
// its owner (a shared handler): what a notice says, never a value.
func (c control) updateSizes(ctx restate.ObjectSharedContext, q driver.UpdatesQuery) (driver.UpdateMetaReply, error) {
	us, found := visibleUpdates(ctx, q)
	if !found {
		return driver.UpdateMetaReply{}, nil
	}
	ms := driver.UpdateMetas(us)
	for i, u := range us {
		ms[i].Bytes = plainLenBytes(u.Value) // a sealed value's plaintext size
	}
	return driver.UpdateMetaReply{Found: true, Updates: ms}, nil
}

// visibleUpdates returns the Work's updates after q's cursor, and whether
// the Work is visible to q's owner (nil updates when it declares none).
func visibleUpdates(ctx restate.ObjectSharedContext, q driver.UpdatesQuery) ([]work.Update, bool) {
	s, ok := load(ctx)
	if !ok || s.In.Owner != q.Owner || s.Detached {
		return nil, false
	}
	if s.Upd == nil {
		return nil, true
	}
	return driver.RestoreUpdateLog(s.Upd.Log).After(q.After), true
}
