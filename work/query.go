package work

import (
	"context"

	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/observe"
)

// lookupLocked finds a Work visible to o, evicting expired Work first.
func (s *Engine) lookupLocked(o Owner, id string) (*item, error) {
	if err := validOwner(o); err != nil {
		return nil, err
	}
	os := s.visibleLocked(o)
	if os == nil {
		return nil, ErrNotFound
	}
	it := os.items.get(id)
	if it == nil {
		return nil, ErrNotFound
	}
	return it, nil
}

// relookupLocked is lookupLocked(o, it's id) for it, found by that
// lookup before s.mu was last released: an id names one Work, so it is
// what the lookup would find, if anything.
func (s *Engine) relookupLocked(o Owner, it *item) (*item, error) {
	if os := s.visibleLocked(o); os != it.owner || !it.listed {
		return nil, ErrNotFound
	}
	return it, nil
}

func (it *item) status() Status {
	return Status{Work: it.ref(), TargetLabel: it.target.Label, State: it.state(),
		CreatedAt: it.created, StartedAt: it.started, FinishedAt: it.finished,
		ResultAvailable: it.hasOutput, BudgetExhausted: it.brun.exhaustedBudget(),
		ResultRead: it.read, Progress: it.prog.snapshot(), Class: it.class.String(),
		AwaitingApproval: it.awaiting(), Waiting: it.job != nil && it.job.waiting}
}

// Status returns the projection of one Work visible to o, or ErrNotFound.
func (s *Engine) Status(ctx context.Context, o Owner, id string) (Status, error) {
	if s != nil && s.impl != nil {
		return s.impl.Status(ctx, o, id)
	}
	if s.uninitialized() {
		return Status{}, ErrNotInitialized
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it, err := s.lookupLocked(o, id)
	if err != nil {
		return Status{}, err
	}
	return it.status(), nil
}

// List returns at most 50 Works visible to o: unfinished first, then
// finished; within each group newest first (by start order). It returns an
// empty slice for an owner with none.
func (s *Engine) List(ctx context.Context, o Owner) ([]Status, error) {
	if s != nil && s.impl != nil {
		return s.impl.List(ctx, o)
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
	top := topK(&os.items, contract.MaxListed, func(a, b *item) bool { return a.order().ListsBefore(b.order()) })
	out := make([]Status, len(top))
	for i, it := range top {
		out[i] = it.status()
	}
	return out, nil
}

// rows is work/boundary's Rows (which documents it).
func (s *Engine) rows(ctx context.Context, o Owner) (rows []observe.Row, more int, err error) {
	if s != nil && s.impl != nil {
		return s.impl.Rows(ctx, o)
	}
	if s.uninitialized() {
		return nil, 0, ErrNotInitialized
	}
	if validOwner(o) != nil {
		return nil, 0, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	os := s.visibleLocked(o)
	if os == nil {
		return nil, 0, nil
	}
	top := topK(&os.items, contract.MaxRows, func(a, b *item) bool { return a.order().RowsBefore(b.order()) })
	now := s.clock.Now()
	rows = make([]observe.Row, len(top))
	for i, it := range top {
		rows[i] = observe.Row{ID: it.id(), TargetLabel: it.target.Label, State: it.state(),
			Elapsed: contract.Elapsed(it.created, it.started, it.finished, now), ResultAvailable: it.hasOutput}
	}
	return rows, os.items.len() - len(rows), nil
}

// order is what the contract's orders (contract.Order) read of it.
func (it *item) order() contract.Order {
	return contract.Order{State: it.state(), Seq: it.seq, ResultAvailable: it.hasOutput, ResultRead: it.read}
}
