package work

import (
	"context"
	"time"
)

// Subscribe returns a Subscription to the completion notices of o: one
// Notice for each Work visible to o that reaches a terminal state from now
// on (detached Work, and Work cancelled by Release, is no longer visible and
// has none), and one NoticeApproval for each Work visible to o that starts
// to await approval (Spec.NeedsApproval), and one NoticeUpdate for each
// update such a Work's child reports and that is accepted (Spec.Updates).
// Notices wait in a buffer of
// buffer entries (defaultNoticeBuffer when buffer < 1); the engine never
// waits for the reader: when the buffer is full the notice is dropped and
// counted (Dropped), except that a settlement notice is never dropped to
// make room for a notice of another kind: it takes the place of the
// oldest buffered notice of another kind (NoticeApproval or NoticeUpdate)
// instead, which is dropped and counted. A reader that must
// not miss a settlement treats a Notice as a wake-up and reads the owner's
// state with List or Status.
//
// The Subscription's channel is closed by its Close, by Release of o (and
// the end of a child's scope, for a scope owner, whether or not it started
// Work) and by the engine's Close and Shutdown. Subscribe fails with
// ErrInvalidOwner, ErrClosed, or ErrScopeEnded for a child's scope that
// has ended.
// An owner may have several Subscriptions.
func (s *Engine) Subscribe(ctx context.Context, o Owner, buffer int) (*Subscription, error) {
	if s != nil && s.impl != nil {
		return s.impl.Subscribe(ctx, o, buffer)
	}
	if s.uninitialized() {
		return nil, ErrNotInitialized
	}
	if err := validOwner(o); err != nil {
		return nil, err
	}
	if buffer < 1 {
		buffer = defaultNoticeBuffer
	}
	id := o.id
	sub := &Subscription{ch: make(chan Notice, buffer)}
	sub.end = func() {
		s.mu.Lock()
		s.unsubscribeLocked(id, sub)
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if sc := scopeOf(o); sc != nil && sc.ended {
		return nil, ErrScopeEnded
	}
	if s.subs == nil {
		s.subs = make(map[string]map[*Subscription]struct{})
	}
	m := s.subs[id]
	if m == nil {
		m = make(map[*Subscription]struct{})
		s.subs[id] = m
	}
	m[sub] = struct{}{}
	return sub, nil
}

// unsubscribeLocked ends sub, a Subscription of the owner id: s forgets
// it and its channel is closed, once (Subscription.shut). It is the
// Subscription's end too (Close), which takes s.mu for it.
func (s *Engine) unsubscribeLocked(id string, sub *Subscription) {
	if m := s.subs[id]; m != nil {
		delete(m, sub)
		if len(m) == 0 {
			delete(s.subs, id)
		}
	}
	sub.shut()
}

// closeSubscriptionsLocked ends the Subscriptions of the owner id, or all
// of them when all is set.
func (s *Engine) closeSubscriptionsLocked(id string, all bool) {
	if all {
		for id, m := range s.subs {
			for sub := range m {
				s.unsubscribeLocked(id, sub)
			}
		}
		return
	}
	for sub := range s.subs[id] {
		s.unsubscribeLocked(id, sub)
	}
}

// endScopeLocked ends the child's scope sc, whose owner id is id: it
// admits no more Work, its Work is released, and its Subscriptions are
// closed (also when it never started Work and so has no registry entry).
func (s *Engine) endScopeLocked(sc *scope, id string, e *emission) {
	sc.ended = true
	if os := sc.os; os != nil && s.ownerLocked(os.id) == os {
		s.releaseLocked(os, e)
	}
	s.closeSubscriptionsLocked(id, false)
}

// pendingNotice is a notice gathered under s.mu and sent after it is
// released.
type pendingNotice struct {
	sub *Subscription
	n   Notice
}

// settledLocked records that it has just become terminal: progress events
// stop and its owner's subscribers get a notice (sent after s.mu is
// released, with the emission).
func (s *Engine) settledLocked(it *item, now time.Time, e *emission) {
	it.prog.ended.Store(true)
	if it.upd != nil {
		it.upd.endLocked() // no more updates, no open question (update_work.go)
	}
	if it.detached || len(s.subs) == 0 {
		return
	}
	if subs := s.subs[it.owner.id]; len(subs) > 0 {
		noticeLocked(subs, it, now, e)
	}
}

// noticeLocked queues a notice of terminal it for each of subs.
//
//go:noinline
func noticeLocked(subs map[*Subscription]struct{}, it *item, now time.Time, e *emission) {
	for sub := range subs {
		e.notices = append(e.notices, pendingNotice{sub, Notice{WorkID: it.id(),
			Target: it.target.Label, State: it.state(), ResultAvailable: it.hasOutput, Time: now}})
	}
}

// settled is work/boundary's Settled (which documents it).
func (s *Engine) settled(ctx context.Context, o Owner) ([]Status, error) {
	if s != nil && s.impl != nil {
		return s.impl.Settled(ctx, o)
	}
	if s.uninitialized() {
		return nil, ErrNotInitialized
	}
	if err := validOwner(o); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	os := s.visibleLocked(o)
	if os == nil {
		return []Status{}, nil
	}
	out := make([]Status, 0, os.terminal.len())
	for it := os.terminal.front(); it != nil; it = it.next {
		out = append(out, it.status())
	}
	return out, nil
}

// hasLive is work/boundary's Live (which documents it).
func (s *Engine) hasLive(ctx context.Context, o Owner) (bool, error) {
	if s != nil && s.impl != nil {
		return s.impl.Live(ctx, o)
	}
	if s.uninitialized() {
		return false, ErrNotInitialized
	}
	if err := validOwner(o); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	os := s.ownerLocked(o.id)
	return os != nil && os.items.len() > os.terminal.len(), nil
}
