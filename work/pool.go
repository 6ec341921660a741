package work

import (
	"context"

	"github.com/agentwork/agentwork/work/internal/contract"
)

// budgets is the in-process engine's budget accounting, guarded by s.mu.
type budgets struct {
	// pools are the top-level owners' pools by owner id (a child's
	// scope reaches its reservation through scope.acct).
	pools map[string]*account
}

// SetPool gives the top-level owner o a pool: the total turns, tool calls
// and tokens all of the Work (and foreground calls) it starts may reserve.
// Each start reserves its child's budget from it: a child's own limits
// (Spec.Budget) in full; where it sets none, an agent child its default
// capped at a quarter of the pool (rounded up) and at what remains, a
// function child nothing (its own children reserve from the pool instead). A start it
// cannot cover
// fails with ErrBudgetExhausted before any Work exists; when the child
// settles, what it did not spend is refunded. A zero field leaves that
// dimension unpooled. Calling SetPool again replaces the limits and keeps
// what is reserved and spent. Release forgets the pool.
//
// SetPool fails with ErrInvalidOwner for the zero Owner or a child's scope
// (its children reserve from the child's own reservation).
func (s *Engine) SetPool(ctx context.Context, o Owner, b Budget) error {
	if s != nil && s.impl != nil {
		return s.impl.SetPool(ctx, o, b)
	}
	if err := s.poolable(b); err != nil {
		return err
	}
	if err := validOwner(o); err != nil {
		return err
	}
	if o.depth > 0 {
		return ErrInvalidOwner.detail(contract.PoolScope)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bud.pools == nil {
		s.bud.pools = make(map[string]*account)
	}
	a := s.bud.pools[o.id]
	if a == nil {
		a = &account{}
		s.bud.pools[o.id] = a
	}
	for i, v := range b.dims() {
		a.m[i].limit, a.pooled[i] = max(v, 0), v > 0
	}
	return nil
}

func (s *Engine) poolTotalsLocked(fn func(budget string, reserved, remaining int64)) {
	var held, rem [numDims]int64
	var any [numDims]bool
	for _, a := range s.bud.pools {
		for i := range a.m {
			if a.m[i].limit > 0 {
				any[i] = true
				held[i] += a.m[i].held.Load()
				rem[i] += a.avail(i)
			}
		}
	}
	for i, name := range contract.DimNames {
		if any[i] {
			fn(name, held[i], rem[i])
		}
	}
}

// forgetPoolLocked drops the pool of the top-level owner id. Children
// still holding reservations settle into the forgotten account.
func (s *Engine) forgetPoolLocked(id string) {
	delete(s.bud.pools, id)
}
