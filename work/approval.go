package work

import (
	"context"
	"sort"
	"time"

	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/observe"
)

// Approval before a child starts (Spec.NeedsApproval): the in-process
// engine's Pending, Approve and Deny. A Work that needs approval is
// registered queued like any other, but it is held out of its owner's
// dispatch queue: it blocks no
// Work queued after it, holds no running slot and is not counted in
// observe.Snapshot.Queued nor in the queue age (observe.LiveWork.Enqueued is zero while it
// is held). Its approval timeout is a Clock.AfterFunc timer, stopped as
// soon as the Work leaves the held state by any path (approved, denied,
// cancelled, released, closed). No goroutine waits for an answer.

// approval is a held Work's request and, once approved, when it joined
// the dispatch queue.
type approval struct {
	input     string // the child's input, for the approver only; dropped once answered
	requested time.Time
	deadline  time.Time
	approved  time.Time   // when it was approved; zero until then
	stop      func() bool // the timeout's timer, while held
	held      bool        // awaiting its answer: queued, out of the dispatch queue
}

// awaiting reports whether it is held for its approval.
func (it *item) awaiting() bool { return it.ap != nil && it.ap.held }

// enqueued returns when it joined the dispatch queue: when it was created,
// or when its approval was given; zero while it awaits approval. Queue
// ages (observe.LiveWork.Enqueued, Event.QueueWait) count from it.
func (it *item) enqueued() time.Time {
	switch {
	case it.ap == nil:
		return it.created
	case it.ap.held:
		return time.Time{}
	case !it.ap.approved.IsZero():
		return it.ap.approved
	}
	return it.created
}

// errCallApproval is the ErrInvalidSpec of a foreground call
// (Engine.Call) whose Spec has NeedsApproval: a foreground call returns
// the child's output, not a Ref, so it has nothing to return while it
// waits for an answer. Every engine refuses it so (the durable ones run
// their foreground calls on an in-process engine).
var errCallApproval = newError(ErrInvalidSpec.Code,
	"invalid work spec: a foreground call cannot wait for approval (start the Work in the background to get its Ref)")

// validApprover returns ErrInvalidOwner for an owner that may not read or
// answer approvals (the zero Owner, an invalid top-level id) and nil for
// any other Owner, Approver() included.
func validApprover(o Owner) error {
	if o.IsApprover() {
		return nil
	}
	return validOwner(o)
}

// holdLocked holds it, just registered for spec, for its approval: the
// request event, the timeout's timer and a NoticeApproval to its owner's
// Subscriptions. The caller does not put it in the dispatch queue.
func (s *Engine) holdLocked(it *item, spec *Spec, e *emission) {
	d, now := contract.ApprovalWait(spec.ApprovalTimeout), it.created
	ap := &approval{input: spec.Input, requested: now, deadline: now.Add(d), held: true}
	it.ap = ap
	if s.held == nil {
		s.held = make(map[string]*item)
	}
	s.held[it.id()] = it
	e.add(it, observe.Event{Type: observe.EventApprovalRequested, Time: now})
	if subs := s.subs[it.owner.id]; len(subs) > 0 {
		for sub := range subs {
			e.notices = append(e.notices, pendingNotice{sub, Notice{Kind: NoticeApproval, WorkID: it.id(),
				Target: it.target.Label, State: StateQueued, Time: now}})
		}
	}
	ap.stop = s.clock.AfterFunc(d, func() { s.approvalExpired(it, ap) })
}

// unholdLocked ends it's wait for an answer: the timer stops, it leaves
// the held set and the approver's data is dropped.
func (s *Engine) unholdLocked(it *item) {
	ap := it.ap
	ap.held = false
	if ap.stop != nil {
		ap.stop()
		ap.stop = nil
	}
	ap.input = ""
	delete(s.held, it.id())
}

// approvalExpired is the timer of ap, it's request: no answer came in
// time, and it ends cancelled with ClassApprovalTimeout (unless it was
// answered or cancelled first).
func (s *Engine) approvalExpired(it *item, ap *approval) {
	var e emission
	s.mu.Lock()
	if it.ap != ap || !ap.held {
		s.mu.Unlock()
		return
	}
	ap.stop = nil // it has fired
	s.cancelHeldLocked(it, s.clock.Now(), classApprovalTimeout, &e)
	s.unlockAndEmit(&e)
}

// cancelHeldLocked cancels held it with class (ClassCancelled,
// ClassDenied or ClassApprovalTimeout).
func (s *Engine) cancelHeldLocked(it *item, now time.Time, class termClass, e *emission) {
	s.unholdLocked(it)
	it.ap = nil // a terminal Work keeps nothing of its request
	it.run = nil
	it.class = class
	s.transition(it, StateCancelled, e, now).Duration = now.Sub(it.created)
	s.finishLocked(it, now, e)
}

// Pending returns the Work visible to o that awaits approval, oldest
// request first (an empty, non-nil slice for none); for o Approver(),
// every owner's, detached Work included. Each request carries the child's
// input: it is the application's own data, for the approver, and the
// engine gives it to nothing else (no event, log or status block
// carries it). It costs O(o's Works), or O(Works awaiting approval) for
// the approver, plus the sort.
//
// Its errors, in this order: ErrNotInitialized for an Engine made by
// neither work.New nor a runner, ErrInvalidOwner for the zero Owner (or an
// invalid top-level id), ErrClosed after Close.
func (s *Engine) Pending(ctx context.Context, o Owner) ([]ApprovalRequest, error) {
	if s != nil && s.impl != nil {
		return s.impl.Pending(ctx, o)
	}
	if s.uninitialized() {
		return nil, ErrNotInitialized
	}
	if err := validApprover(o); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	var its []*item
	if o.IsApprover() {
		for _, it := range s.held {
			its = append(its, it)
		}
	} else if os := s.visibleLocked(o); os != nil {
		os.items.each(func(it *item) {
			if it.awaiting() {
				its = append(its, it)
			}
		})
	}
	sort.Slice(its, func(i, j int) bool {
		a, b := its[i], its[j]
		if !a.ap.requested.Equal(b.ap.requested) {
			return a.ap.requested.Before(b.ap.requested)
		}
		return a.seq < b.seq
	})
	out := make([]ApprovalRequest, len(its))
	for i, it := range its {
		out[i] = ApprovalRequest{Work: it.ref(), TargetLabel: it.target.Label, Owner: it.owner.id,
			Input: it.ap.input, RequestedAt: it.ap.requested, Deadline: it.ap.deadline}
	}
	return out, nil
}

// Approve gives the approval the Work id awaits: observe.EventApproved, and it
// joins the tail of its owner's dispatch queue (FIFO behind the Work
// queued before the approval), to run when a slot is free; its queue age
// counts from now. o is the Work's owner (it must be visible to o) or
// Approver().
//
// Its errors, in this order: ErrNotInitialized, ErrInvalidOwner (as for
// Pending), ErrClosed after Close, and ErrNotFound when id is empty,
// unknown, another owner's, detached (for its owner), or a Work that does
// not await approval (it never did, or it was already approved, denied,
// cancelled or timed out): an answer counts once.
func (s *Engine) Approve(ctx context.Context, o Owner, id string) error {
	if s != nil && s.impl != nil {
		return s.impl.Approve(ctx, o, id)
	}
	return s.answer(o, id, true)
}

// Deny refuses the approval the Work id awaits: observe.EventDenied, then it ends
// cancelled with Status.Class ClassDenied (observe.EventCancelled with that
// ErrorClass, and a settlement notice). o and the errors are as for
// Approve.
func (s *Engine) Deny(ctx context.Context, o Owner, id string) error {
	if s != nil && s.impl != nil {
		return s.impl.Deny(ctx, o, id)
	}
	return s.answer(o, id, false)
}

func (s *Engine) answer(o Owner, id string, approve bool) error {
	if s.uninitialized() {
		return ErrNotInitialized
	}
	if err := validApprover(o); err != nil {
		return err
	}
	var e emission
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	it := s.awaitingLocked(o, id)
	if it == nil {
		s.mu.Unlock()
		return ErrNotFound
	}
	now := s.clock.Now()
	if approve {
		s.approveLocked(it, now, &e)
	} else {
		e.add(it, observe.Event{Type: observe.EventDenied, Time: now})
		s.cancelHeldLocked(it, now, classDenied, &e)
	}
	s.unlockAndEmit(&e)
	return nil
}

// awaitingLocked returns the Work id that awaits approval and that o may
// answer, or nil.
func (s *Engine) awaitingLocked(o Owner, id string) *item {
	if id == "" {
		return nil
	}
	if o.IsApprover() {
		return s.held[id]
	}
	it, err := s.lookupLocked(o, id)
	if err != nil || !it.awaiting() {
		return nil
	}
	return it
}

// approveLocked moves held it to the tail of its owner's dispatch queue
// and dispatches.
func (s *Engine) approveLocked(it *item, now time.Time, e *emission) {
	s.unholdLocked(it)
	it.ap.approved = now
	e.add(it, observe.Event{Type: observe.EventApproved, Time: now})
	os := it.owner
	os.queue.pushBack(it)
	s.queuedBelowLocked(os, 1)
	if !os.inRing {
		s.ready.pushBack(os)
	}
	s.offerLocked(os, e)
	s.dispatchLocked(e)
}

// heldSnapshotLocked adds the Works awaiting approval to snap: in Live
// (queued, AwaitingApproval), in AwaitingApproval and in their targets'
// counts (AwaitingApproval, OldestApproval). observe.Snapshot.Queued does not
// count them.
func (s *Engine) heldSnapshotLocked(snap *observe.Snapshot) {
	if len(s.held) == 0 {
		return
	}
	idx := make(map[string]int, len(snap.Counts))
	for i, tc := range snap.Counts {
		idx[tc.Target] = i
	}
	for _, it := range s.held {
		snap.Live = append(snap.Live, it.live())
		snap.AwaitingApproval++
		if i, ok := idx[it.target.Label]; ok {
			tc := &snap.Counts[i]
			tc.AwaitingApproval++
			if tc.OldestApproval.IsZero() || it.ap.requested.Before(tc.OldestApproval) {
				tc.OldestApproval = it.ap.requested
			}
		}
	}
}
