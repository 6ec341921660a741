package work

import (
	"context"
	"time"

	"github.com/agentwork/agentwork/work/observe"
)

// Cancel asks for a Work to stop. Queued Work is cancelled before it runs;
// running Work becomes cancel-requested and its context is cancelled (the
// child stops cooperatively; completion or an unrelated failure may still
// win); a repeated request is accepted again with no change; terminal Work
// is not accepted.
func (s *Engine) Cancel(ctx context.Context, o Owner, id string) (CancelReceipt, error) {
	if s != nil && s.impl != nil {
		return s.impl.Cancel(ctx, o, id)
	}
	if s.uninitialized() {
		return CancelReceipt{}, ErrNotInitialized
	}
	var e emission
	s.mu.Lock()
	it, err := s.lookupLocked(o, id)
	if err != nil {
		s.mu.Unlock()
		return CancelReceipt{}, err
	}
	now := s.clock.Now()
	accepted := s.cancelLocked(it, now, errCancelRequested, &e)
	r := CancelReceipt{WorkID: id, Accepted: accepted, State: it.state(), AcceptedAt: now}
	s.unlockAndEmit(&e)
	return r, nil
}

func (s *Engine) cancelLocked(it *item, now time.Time, cause error, e *emission) bool {
	switch it.state() {
	case StateQueued:
		if it.awaiting() {
			s.cancelHeldLocked(it, now, classCancelled, e)
			return true
		}
		os := it.owner
		os.queue.remove(it)
		s.queuedBelowLocked(os, -1)
		if os.queue.len() == 0 && os.inRing {
			s.ready.remove(os)
		}
		it.run = nil
		it.class = classCancelled
		s.transition(it, StateCancelled, e, now).Duration = now.Sub(it.created)
		s.finishLocked(it, now, e)
		return true
	case StateRunning:
		s.transition(it, StateCancelRequested, e, now)
		it.cancelRun(cause)
		s.wakeJobLocked(it, cause)
		return true
	case StateCancelRequested:
		return true
	}
	return false
}

// Detach removes a Work from o's view without cancelling it: afterwards o
// gets ErrNotFound for it, and its execution continues. Detaching hides the
// Work and nothing else: until it is terminal it still counts against o's
// outstanding limit, and it is cancelled like o's visible Work by o's
// Release, by the end of the child whose scope o is, and by Close; the
// Observer sees the rest of its events. Its command records are dropped at
// once, and it is forgotten entirely once it is terminal.
func (s *Engine) Detach(ctx context.Context, o Owner, id string) (DetachReceipt, error) {
	if s != nil && s.impl != nil {
		return s.impl.Detach(ctx, o, id)
	}
	if s.uninitialized() {
		return DetachReceipt{}, ErrNotInitialized
	}
	var e emission
	s.mu.Lock()
	it, err := s.lookupLocked(o, id)
	if err != nil {
		s.mu.Unlock()
		return DetachReceipt{}, err
	}
	s.detachLocked(it, &e)
	s.unlockAndEmit(&e)
	return DetachReceipt{ID: id}, nil
}

func (s *Engine) detachLocked(it *item, e *emission) {
	os := it.owner
	os.items.del(it)
	it.listed = false
	it.detached = true
	it.dropCommands()
	e.add(it, observe.Event{Type: observe.EventDetached, Time: s.clock.Now()})
	if it.list == &os.terminal {
		os.removeTerminal(it)
		s.forgetItemLocked(it)
		return
	}
	if os.hidden == nil {
		os.hidden = make(map[*item]struct{})
	}
	os.hidden[it] = struct{}{}
}

// Release detaches all of o's visible Work, cancels every unfinished Work
// of o, visible or detached (queued Work is cancelled, running Work becomes
// cancel-requested and is forgotten when it ends) and forgets o (including
// its starts budget). Call it when the agent instance that o stands for is
// done. A child's own scope is released when the child ends. Release of an
// invalid owner does nothing. Its error is ErrNotInitialized for an Engine
// made by neither work.New nor a runner; the in-process engine's is nil
// otherwise: in memory, a release cannot fail.
func (s *Engine) Release(ctx context.Context, o Owner) error {
	if s != nil && s.impl != nil {
		return s.impl.Release(ctx, o)
	}
	if s.uninitialized() {
		return ErrNotInitialized
	}
	if validOwner(o) != nil {
		return nil
	}
	var e emission
	s.mu.Lock()
	if os := s.ownerLocked(o.id); os != nil {
		s.releaseLocked(os, &e)
	}
	s.forgetPoolLocked(o.id)
	s.closeSubscriptionsLocked(o.id, false)
	s.unlockAndEmit(&e)
	return nil
}

// releaseLocked detaches every Work visible to os, then cancels the
// unfinished ones, and cancels os's detached Work. Detaching first
// matters: cancelling queued Work of a still-attached owner would retire it
// into the terminal list and could evict other items mid-release, so which
// items got a detached event would depend on map order.
func (s *Engine) releaseLocked(os *ownerState, e *emission) {
	now := s.clock.Now()
	for _, it := range os.items.all() { // detaching removes it from os.items
		s.detachLocked(it, e)
		s.cancelLocked(it, now, errCancelRequested, e)
	}
	for it := range os.hidden {
		s.cancelLocked(it, now, errCancelRequested, e)
	}
	delete(s.owners, os.id)
	if s.lastOwner == os {
		s.lastOwner = nil
	}
	if os.sc != nil && os.sc.os == os {
		os.sc.os = nil
	}
	s.closeSubscriptionsLocked(os.id, false)
}
