package work

import (
	"context"

	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/internal/updatelog"
	"github.com/agentwork/agentwork/work/observe"
)

// Start accepts Work for spec.Owner and returns its Ref at once; the child
// runs later on its own goroutine. ctx is the caller's context: it is
// handed to Observer.Bind (to link the execution to the launch) and is not
// otherwise used; none of its values or its cancellation reach the child.
//
// Start fails with ErrInvalidOwner, ErrInvalidSpec, ErrClosed,
// ErrScopeEnded or ErrLimit (outstanding, starts or depth); on failure
// nothing is registered. A Spec with NeedsApproval is admitted the same
// way (it counts against the owner's outstanding limit and reserves its
// pool budget) and then held out of the dispatch queue until it is
// answered (see Approve). Admission is atomic; Observer.Bind then runs
// without the engine's lock. A Start that overlaps Close (or the
// owner's Release) may return a Ref whose Work was cancelled before it ran.
func (s *Engine) Start(ctx context.Context, spec Spec) (Ref, error) {
	if s != nil && s.impl != nil {
		return s.impl.Start(ctx, spec)
	}
	if err := s.admissible(&spec); err != nil {
		return Ref{}, err
	}
	// The Work's item and the room for its scope id are made before the
	// lock is taken (a refused Start drops them), so that its holders wait
	// for no allocation; the id is drawn under the lock.
	scopeBuf := newScopeBuf(spec.Owner.id)
	it := &item{
		s:        s,
		target:   spec.Target,
		run:      spec.Run,
		maxBytes: contract.ResultBytes(spec.MaxResultBytes, s.lim.MaxResultBytes),
	}
	if spec.Job != nil {
		it.run, it.job = nil, newJobWait(&spec) // Submit runs in its place (job.go)
	}
	if spec.Updates != nil {
		it.upd = &updates{log: updatelog.Make(updatelog.Policy(*spec.Updates))} // update_work.go
	}
	r := &it.brun
	s.mu.Lock()
	it.scopeID = s.scopeIDLocked(scopeBuf)
	if r, err, ok := s.replayLocked(&spec); ok {
		s.mu.Unlock()
		if err != nil {
			return Ref{}, err
		}
		<-r.ready // registered right after Bind, which does not wait
		return r.ref, nil
	}
	now := s.clock.Now()
	os, reason := s.admitLocked(spec.Owner)
	if reason != "" {
		s.mu.Unlock()
		s.observer.Event(ctx, observe.Event{Type: observe.EventRefused, Owner: spec.Owner.id, Depth: spec.Owner.depth,
			Target: spec.Target.Label, Kind: spec.Target.Kind, Time: now, ErrorClass: reason})
		return Ref{}, s.refusal(reason)
	}
	if short := s.reserveLocked(&spec, r); short != "" {
		s.mu.Unlock()
		s.observer.Event(ctx, observe.Event{Type: observe.EventRefused, Owner: spec.Owner.id, Depth: spec.Owner.depth,
			Target: spec.Target.Label, Kind: spec.Target.Kind, Time: now, ErrorClass: ClassBudgetExhausted, Budget: short})
		return Ref{}, ErrBudgetExhausted.detail(contract.PoolShort(short))
	}
	// Reserve the start against the owner's limits, then bind outside the
	// lock so that a slow observer never holds up other owners.
	if os == nil {
		os = s.newOwnerLocked(spec.Owner)
	}
	os.starts++
	os.active++
	launch := recordLaunchLocked(os, &spec, it.ref())
	// Bind runs without the lock; the no-op Observer's Bind is known, and
	// Start then keeps the lock throughout.
	_, nop := s.observer.(observe.NopObserver)
	if !nop {
		s.mu.Unlock()
	}

	it.owner, it.created = os, now
	r.rt = it
	e := emission{nop: nop}
	e.push(it, observe.EventQueued, now).To = StateQueued
	if nop {
		it.ctx = context.Background()
		e.now = now // the lock was held throughout: the same critical section
	} else {
		it.ctx = s.observer.Bind(ctx, context.Background(), *e.event(0))
		s.mu.Lock()
	}
	s.seq++
	it.seq = s.seq
	os.items.put(it)
	it.listed = true
	c := os.counts
	if os.countsLabel != spec.Target.Label || c == nil {
		c = s.counts[spec.Target.Label]
		if c == nil {
			c = new([len(observe.States)]int)
			s.counts[spec.Target.Label] = c
		}
		os.countsLabel, os.counts = spec.Target.Label, c
	}
	it.counts = c
	c[StateQueued.Index()]++
	if spec.NeedsApproval {
		s.holdLocked(it, &spec, &e) // out of the dispatch queue until answered
	} else {
		os.queue.pushBack(it)
		s.queuedBelowLocked(os, 1)
	}
	if launch != nil {
		close(launch.ready)
	}
	if !os.inRing && os.queue.len() > 0 {
		s.ready.pushBack(os)
	}
	switch {
	case !nop && s.ownerLocked(os.id) != os:
		// Release (or the end of a child's scope) overlapped the start:
		// the Work goes the way of the owner's other Work, detached first
		// as releaseLocked does (whether or not Close overlapped too).
		s.detachLocked(it, &e)
		s.cancelLocked(it, s.clock.Now(), errCancelRequested, &e)
	case s.closed:
		// Close overlapped the start: the Work was accepted and is
		// cancelled before it runs, as Close does to all queued Work.
		s.cancelLocked(it, s.clock.Now(), errClosed, &e)
	default:
		// An idle slot lent by an enclosing waiter goes first, so that
		// the pool's free slots stay with the fair order.
		s.offerLocked(os, &e)
		s.dispatchLocked(&e)
	}
	ref := it.ref()
	s.unlockAndEmit(&e)
	return ref, nil
}

// admitLocked returns o's registry entry (nil when it has none yet) and ""
// when o may start one more Work, else the refusal reason: "closed" or a
// Limit name.
func (s *Engine) admitLocked(o Owner) (*ownerState, string) {
	if s.closed || s.draining {
		return nil, "closed"
	}
	if sc := scopeOf(o); sc != nil && sc.ended {
		return nil, reasonScopeEnded
	}
	if o.depth >= s.lim.MaxDepth {
		return nil, observe.LimitDepth
	}
	os := s.visibleLocked(o)
	switch {
	case os == nil:
		return nil, ""
	case os.active >= s.lim.MaxOutstanding:
		return nil, observe.LimitOutstanding
	case s.lim.MaxStarts > 0 && os.starts >= s.lim.MaxStarts:
		return nil, observe.LimitStarts
	}
	return os, ""
}

// refusal maps a refusal reason to its error.
func (s *Engine) refusal(reason string) error {
	switch reason {
	case "closed":
		return ErrClosed
	case reasonScopeEnded:
		return ErrScopeEnded
	case observe.LimitDepth:
		return ErrLimit.detail(contract.LimitDetail(contract.LimitDepth, s.lim.MaxDepth))
	case observe.LimitOutstanding:
		return ErrLimit.detail(contract.LimitDetail(contract.LimitOutstanding, s.lim.MaxOutstanding))
	default:
		return ErrLimit.detail(contract.LimitDetail(contract.LimitStarts, s.lim.MaxStarts))
	}
}

// ownerLocked returns the registry entry of the owner named id, nil when
// it has none. It remembers the last one it found (s.lastOwner: calls in a
// row are mostly for one owner), which releaseLocked forgets.
func (s *Engine) ownerLocked(id string) *ownerState {
	if os := s.lastOwner; os != nil && os.id == id {
		return os
	}
	os := s.owners[id]
	if os != nil {
		s.lastOwner = os
	}
	return os
}

// newOwnerLocked registers o, which has no registry entry.
func (s *Engine) newOwnerLocked(o Owner) *ownerState {
	sc := scopeOf(o)
	os := &ownerState{id: o.id, depth: o.depth, sc: sc}
	s.owners[o.id] = os
	if sc != nil {
		sc.os = os
	}
	return os
}
