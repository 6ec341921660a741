package work

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/agentwork/agentwork/work/internal/updatelog"
	"github.com/agentwork/agentwork/work/observe"
)

// The engine's side of updates and questions: a Work's update state, its
// child's updates and question waits, and the in-process engine's Updates
// and Answer.

// updates is the update state of a Work whose Spec declares updates,
// allocated at Start (the item keeps one pointer to it). It is guarded
// by the engine's lock, except asking.
type updates struct {
	log        updatelog.Log
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
func (s *Engine) askLocked(u *updates) {
	if u.wake != nil {
		return
	}
	u.wake = make(chan struct{})
	u.gen++
	gen := u.gen
	u.asking.Store(true)
	u.stop = s.clock.AfterFunc(u.log.Policy().QuestionTimeout, func() {
		s.mu.Lock()
		if u.gen == gen && u.wake != nil {
			u.stop = nil // this timer has fired
			u.unanswered = append(u.unanswered, u.log.Answered()...)
			u.closeWaitLocked()
		}
		s.mu.Unlock()
	})
}

// reportUpdate decides on an update of the child: its Work's UpdateLog
// (none when its Spec declares none) accepts or refuses it.
func (it *item) reportUpdate(key string, value []byte, question bool) (UpdateReceipt, error) {
	s := it.s
	var em emission
	s.mu.Lock()
	now := s.nowLocked(&em)
	u := it.upd
	rec, reason := UpdateReceipt{}, observe.UpdateRefusedNotDeclared
	if u != nil {
		if it.state() == StateCancelRequested || it.terminal() {
			u.log.End()
		}
		var r updatelog.Receipt
		r, reason = u.log.Accept(key, value, question, now)
		rec = UpdateReceipt(r)
	}
	if reason == "" && rec.Duplicate || it.terminal() {
		// A repeat reports nothing new; a settled Work's events have
		// ended (its terminal event was the last).
		s.mu.Unlock()
		if reason != "" {
			return UpdateReceipt{}, updateRefusal(reason)
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
		return UpdateReceipt{}, updateRefusal(reason)
	}
	return rec, nil
}

// updateNoticeLocked queues a NoticeUpdate of it's update seq for its
// owner's Subscriptions (none for detached Work).
func (s *Engine) updateNoticeLocked(it *item, seq, size int, now time.Time, e *emission) {
	if it.detached || len(s.subs) == 0 {
		return
	}
	for sub := range s.subs[it.owner.id] {
		e.notices = append(e.notices, pendingNotice{sub, Notice{Kind: NoticeUpdate, WorkID: it.id(),
			Target: it.target.Label, State: it.state(), Seq: seq, Bytes: size, Time: now}})
	}
}

// awaitQuestion is the question wait of work/boundary's BeginRequest: while a question of
// the child is open, it blocks until guidance arrives for the Work, the
// question's timeout passes or the child's context ends. It does not
// allocate and takes no lock when no question is open.
func (it *item) awaitQuestion() {
	if it.upd != nil && it.upd.asking.Load() {
		it.waitAnswer(&it.xctx)
	}
}

// waitAnswer blocks until the open wait ends or ctx or the child's
// context ends.
func (it *item) waitAnswer(ctx context.Context) {
	s, u := it.s, it.upd
	s.mu.Lock()
	for u.wake != nil {
		ch := u.wake
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return
		case <-it.xctx.Done():
			return
		}
		s.mu.Lock()
	}
	s.mu.Unlock()
}

// awaitAnswer waits for the answer to the child's open question, if any
// (AwaitAnswer).
func (it *item) awaitAnswer(ctx context.Context) ([]string, error) {
	if it.upd == nil {
		return nil, nil
	}
	it.waitAnswer(ctx)
	if ctx.Err() != nil || it.xctx.Err() != nil {
		return nil, ErrCancelled
	}
	if len(it.takeUnanswered()) > 0 {
		return nil, ErrUnanswered
	}
	return it.guidance(), nil
}

// takeUnanswered returns the child's questions whose wait timed out since
// the last call, and forgets them.
func (it *item) takeUnanswered() []int {
	if it.upd == nil {
		return nil
	}
	s := it.s
	s.mu.Lock()
	seqs := it.upd.unanswered
	it.upd.unanswered = nil
	s.mu.Unlock()
	return seqs
}

// Updates returns the updates of the Work id visible to o with Seq > after,
// in order (an empty slice when there are none, or when its Spec declares
// none). They stay readable after the Work ends, until its record is
// evicted. It fails with ErrInvalidOwner or ErrNotFound (unknown, another
// owner's, or detached).
func (s *Engine) Updates(ctx context.Context, o Owner, id string, after int) ([]Update, error) {
	if s != nil && s.impl != nil {
		return s.impl.Updates(ctx, o, id, after)
	}
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
	return updatelog.After[Update](&it.upd.log, after), nil
}

// Answer queues guidance for a non-terminal Work visible to o as Send does,
// for an agent or a function child: an agent child reads it at its next
// boundary, a function child from AwaitAnswer. Guidance accepted while the
// child has a question open answers it. It fails as Send does, in the
// same order, except that it never returns ErrNotAgent.
func (s *Engine) Answer(ctx context.Context, o Owner, id, commandID, message string) (SendReceipt, error) {
	if s != nil && s.impl != nil {
		return s.impl.Answer(ctx, o, id, commandID, message)
	}
	return s.send(o, id, commandID, message, false)
}
