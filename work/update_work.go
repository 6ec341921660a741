package work

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/agentwork/agentwork/work/observe"
)

// The child side of updates and questions, and the Supervisor's Updates and Answer.

// ErrUpdateRefused: an update the child reported was refused; its Class
// is the reason (an UpdateRefused* constant), and errors.Is matches every
// reason. Nothing of a refused update is kept.
var ErrUpdateRefused = newError("update_refused", "update refused")

// ErrUnanswered: a function child's question (AwaitAnswer) had no answer
// within UpdatePolicy.QuestionTimeout.
var ErrUnanswered = newError("unanswered", "the question was not answered in time")

// updateRefusals are ErrUpdateRefused by reason, registered so that
// DecodeError restores the reason (Class) from the message.
var updateRefusals = func() map[string]*Error {
	m := make(map[string]*Error)
	for _, r := range []string{UpdateRefusedNotDeclared, UpdateRefusedCount, UpdateRefusedBytes,
		UpdateRefusedEnding, UpdateRefusedConflict, UpdateRefusedInvalid, UpdateRefusedUnavailable} {
		e := newError(ErrUpdateRefused.Code, "update refused ("+r+")")
		e.Class = r
		m[r] = e
	}
	return m
}()

// UpdateRefusal returns the ErrUpdateRefused of reason (an UpdateRefused*
// constant; Class is reason), for an Engine that reports a refusal its
// UpdateLog decided.
func UpdateRefusal(reason string) *Error {
	if e := updateRefusals[reason]; e != nil {
		return e
	}
	return ErrUpdateRefused
}

// updates is the update state of a Work whose Spec declares updates,
// allocated at Start (the item keeps one pointer to it). It is guarded
// by the Supervisor's lock, except asking.
type updates struct {
	log        UpdateLog
	asking     atomic.Bool   // a question is open: the child's next boundary waits (read without the lock)
	wake       chan struct{} // closed when the open questions are answered or time out; nil when none is open
	stop       func() bool   // the open question's timeout timer
	gen        uint64        // the open wait's generation, for its timer
	unanswered []int         // questions whose wait timed out, not yet reported (Unanswered)
}

// closeWaitLocked ends the open wait, if any: its timer stops and a
// waiting boundary goes on.
func (u *updates) closeWaitLocked() {
	if u.stop != nil {
		u.stop()
		u.stop = nil
	}
	if u.wake != nil {
		close(u.wake)
		u.wake = nil
	}
	u.asking.Store(false)
}

// answerLocked answers the open questions: guidance was accepted for the
// Work.
func (u *updates) answerLocked() {
	if u.wake == nil {
		return
	}
	u.log.Answered()
	u.closeWaitLocked()
}

// endLocked records that the Work has settled: no more updates, and no
// open wait (its timer stops).
func (u *updates) endLocked() {
	u.log.End()
	u.log.Answered()
	u.closeWaitLocked()
}

// askLocked opens the wait of a question just accepted for it, with its
// timeout from now; a question asked while one is open joins that wait
// (its timer holds).
func (s *Supervisor) askLocked(u *updates) {
	if u.wake != nil {
		return
	}
	u.wake = make(chan struct{})
	u.gen++
	gen := u.gen
	u.asking.Store(true)
	u.stop = s.cfg.clock.AfterFunc(u.log.policy.QuestionTimeout, func() {
		s.mu.Lock()
		if u.gen == gen && u.wake != nil {
			u.stop = nil // this timer has fired
			u.unanswered = append(u.unanswered, u.log.Answered()...)
			u.closeWaitLocked()
		}
		s.mu.Unlock()
	})
}

// ReportUpdate reports an update of the child whose context ctx is (see
// Execution.ReportUpdate). Outside a child it is refused with
// UpdateRefusedNotDeclared.
func ReportUpdate(ctx context.Context, key string, value []byte, question bool) (UpdateReceipt, error) {
	e, _ := ExecutionFrom(ctx)
	return e.ReportUpdate(key, value, question)
}

// AwaitAnswer waits for the answer to the question the function child
// whose context ctx is asked (see Execution.AwaitAnswer).
func AwaitAnswer(ctx context.Context) ([]string, error) {
	e, _ := ExecutionFrom(ctx)
	return e.AwaitAnswer(ctx)
}

// ReportUpdate reports one update of the child's Work: value is its
// encoded payload (valid JSON), key its idempotency key (the tool-call id,
// or one the child chose), and question asks the supervisor a question.
// It returns the update's receipt at once, or ErrUpdateRefused whose Class
// is the reason (UpdateLog.Accept decides, in its order; a Work that is
// cancel-requested or settling refuses with UpdateRefusedEnding). A
// refused update is refused before it is accepted and changes nothing;
// an accepted one is never dropped: it stays readable with Updates until
// the Work's record is evicted. A repeat of an accepted key with the same
// value returns the first receipt (Duplicate set) and reports nothing new.
//
// Each update decided is an observe.EventUpdate (ErrorClass the refusal reason, ""
// when accepted; its size and sequence number, never its value), except
// one reported after the Work settled (a goroutine the child left behind:
// refused, and its events have ended), and an accepted one is a
// NoticeUpdate to the owner's Subscriptions.
//
// A foreground call (Supervisor.Call) has no Work to read updates from:
// its updates are refused with UpdateRefusedNotDeclared (an observe.EventUpdate
// still reports each), and so are those of a Work whose Spec declares
// none. Under another Engine (WithRemote) Remote.Update decides.
func (e *Execution) ReportUpdate(key string, value []byte, question bool) (UpdateReceipt, error) {
	if e == nil || e.run() == nil {
		return UpdateReceipt{}, UpdateRefusal(UpdateRefusedNotDeclared)
	}
	if e.remote() != nil {
		return e.remoteUpdate(key, value, question)
	}
	it := e.it
	if it == nil { // a foreground call
		e.run().report(observe.Event{Type: observe.EventUpdate, Bytes: len(value), Question: question, ErrorClass: UpdateRefusedNotDeclared})
		return UpdateReceipt{}, UpdateRefusal(UpdateRefusedNotDeclared)
	}
	s := e.s
	var em emission
	s.mu.Lock()
	now := s.nowLocked(&em)
	u := it.upd
	rec, reason := UpdateReceipt{}, UpdateRefusedNotDeclared
	if u != nil {
		if it.state() == StateCancelRequested || it.terminal() {
			u.log.End()
		}
		rec, reason = u.log.Accept(key, value, question, now)
	}
	if reason == "" && rec.Duplicate || it.terminal() {
		// A repeat reports nothing new; a settled Work's events have
		// ended (its terminal event was the last).
		s.mu.Unlock()
		if reason != "" {
			return UpdateReceipt{}, UpdateRefusal(reason)
		}
		return rec, nil
	}
	em.add(it, observe.Event{Type: observe.EventUpdate, Time: now, Seq: rec.Seq, Bytes: len(value), Question: question, ErrorClass: reason})
	if reason == "" {
		if question {
			s.askLocked(u)
		}
		s.updateNoticeLocked(it, rec.Seq, len(value), now, &em)
	}
	s.unlockAndEmit(&em)
	if reason != "" {
		return UpdateReceipt{}, UpdateRefusal(reason)
	}
	return rec, nil
}

// updateNoticeLocked queues a NoticeUpdate of it's update seq for its
// owner's Subscriptions (none for detached Work).
func (s *Supervisor) updateNoticeLocked(it *item, seq, size int, now time.Time, e *emission) {
	if it.detached || len(s.subs) == 0 {
		return
	}
	for sub := range s.subs[it.owner.id] {
		e.notices = append(e.notices, pendingNotice{sub, Notice{Kind: NoticeUpdate, WorkID: it.id(),
			Target: it.target.Label, State: it.state(), Seq: seq, Bytes: size, Time: now}})
	}
}

// awaitQuestion is the question wait of BeginRequest: while a question of
// the child is open, it blocks until guidance arrives for the Work, the
// question's timeout passes or the child's context ends. It does not
// allocate and takes no lock when no question is open.
func (e *Execution) awaitQuestion() {
	if r := e.remote(); r != nil {
		if r.asking.Load() {
			e.remoteAwait(r.ctx)
		}
		return
	}
	if it := e.it; it != nil && it.upd != nil && it.upd.asking.Load() {
		e.waitAnswer(e.cctx())
	}
}

// waitAnswer blocks until the open wait ends or ctx or the child's
// context ends.
func (e *Execution) waitAnswer(ctx context.Context) {
	s, u := e.s, e.it.upd
	s.mu.Lock()
	for u.wake != nil {
		ch := u.wake
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return
		case <-e.cctx().Done():
			return
		}
		s.mu.Lock()
	}
	s.mu.Unlock()
}

// AwaitAnswer is how a function child waits for the answer to its
// question: it blocks until guidance arrives for the Work (Answer) and
// returns it, drained as Guidance drains it. With no answer within the
// question's timeout it returns ErrUnanswered, and ErrCancelled when ctx
// or the child's context ends first. With no question open it returns at
// once with the guidance waiting (nil when there is none). An agent child
// does not call it: its next BeginRequest waits instead. Outside a child
// it returns nil and no error.
func (e *Execution) AwaitAnswer(ctx context.Context) ([]string, error) {
	if e == nil || e.run() == nil {
		return nil, nil
	}
	if r := e.remote(); r != nil {
		if r.asking.Load() && !e.remoteAwait(ctx) {
			if ctx.Err() != nil {
				return nil, ErrCancelled
			}
			e.Unanswered()
			return nil, ErrUnanswered
		}
		return e.Guidance(), nil
	}
	it := e.it
	if it == nil || it.upd == nil {
		return nil, nil
	}
	e.waitAnswer(ctx)
	if ctx.Err() != nil || e.cctx().Err() != nil {
		return nil, ErrCancelled
	}
	if len(e.Unanswered()) > 0 {
		return nil, ErrUnanswered
	}
	return e.Guidance(), nil
}

// Unanswered returns the sequence numbers of the child's questions whose
// wait ended without an answer (their timeout passed) since the last call,
// and forgets them: the adapter frames a "no answer" note into the
// child's next request for them. nil when there are none.
func (e *Execution) Unanswered() []int {
	if e == nil {
		return nil
	}
	if r := e.remote(); r != nil {
		r.mu.Lock()
		seqs := r.unanswered
		r.unanswered = nil
		r.mu.Unlock()
		return seqs
	}
	it := e.it
	if it == nil || it.upd == nil {
		return nil
	}
	e.s.mu.Lock()
	seqs := it.upd.unanswered
	it.upd.unanswered = nil
	e.s.mu.Unlock()
	return seqs
}

// Updates returns the updates of the Work id visible to o with Seq > after,
// in order (an empty slice when there are none, or when its Spec declares
// none). They stay readable after the Work ends, until its record is
// evicted. It fails with ErrInvalidOwner or ErrNotFound (unknown, another
// owner's, or detached).
func (s *Supervisor) Updates(ctx context.Context, o Owner, id string, after int) ([]Update, error) {
	if s.uninitialized() {
		return nil, ErrNotInitialized
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it, err := s.lookupLocked(o, id)
	if err != nil {
		return nil, err
	}
	if it.upd == nil {
		return []Update{}, nil
	}
	return it.upd.log.After(after), nil
}

// Answer queues guidance for a non-terminal Work visible to o as Send does,
// for an agent or a function child: an agent child reads it at its next
// boundary, a function child from AwaitAnswer. Guidance accepted while the
// child has a question open answers it. It fails as Send does, in the
// same order, except that it never returns ErrNotAgent.
func (s *Supervisor) Answer(ctx context.Context, o Owner, id, commandID, message string) (SendReceipt, error) {
	return s.send(o, id, commandID, message, false)
}
