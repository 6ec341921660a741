package work

import (
	"time"

	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/internal/seam"
)

// work/driver resolves a durable child's budget as the in-process engine
// does (package seam's EffectiveBudget).
func init() {
	seam.EffectiveBudget = func(sup any, want [3]int64, maxDur time.Duration) ([3]int64, time.Duration) {
		s, _ := sup.(*Engine)
		var spec Spec
		spec.Budget.setDims(want)
		spec.Budget.MaxDuration = maxDur
		b := s.effectiveBudget(spec)
		return b.dims(), b.MaxDuration
	}
}

// effectiveBudget returns the budget a child started with spec runs with
// under s, pools aside: its own limits, else the defaults
// (WithDefaultBudget), clamped to the ceiling (WithBudgetCeiling), and its
// deadline.
func (s *Engine) effectiveBudget(spec Spec) Budget {
	if s == nil {
		s = &Engine{} // as the zero Engine: no default, no ceiling
	}
	eff := s.budget.dims(spec.Budget.dims())
	for i := range eff {
		eff[i] = max(eff[i], 0)
	}
	var b Budget
	b.setDims(eff)
	b.MaxDuration = s.budget.duration(&spec)
	return b
}

// reserveLocked resolves spec's budget for a child of owner and reserves
// it from the owner's pool or reservation. It returns the run, or the
// budget that cannot be covered. scope is the id the child's own scope will
// have: its children reserve from this run.
//
// In a pooled dimension (the owner's pool, or a parent child's reservation
// that is explicit or from a pool), a child that sets its own limit
// reserves it, refused when it does not fit. A child that sets none
// reserves, if it is an agent, its default capped at its contract.PoolShare of the
// pool and at what remains (refused when nothing remains); if it is a
// function (no model requests of its own), nothing: its own children then
// reserve from the pool as if they were the function's siblings, so that
// no descendant escapes it.
//
// r is the caller's zero run, which reserveLocked fills in.
func (s *Engine) reserveLocked(spec *Spec, r *run) string {
	r.fail = spec.FailOnBudget
	// A top-level owner's account is its pool; a child's scope's is the
	// child's reservation, reached through the scope (whose Start the
	// scope's end refuses before this).
	parent := s.bud.pools[spec.Owner.id]
	if spec.Owner.depth > 0 {
		parent = nil
		if sc := scopeOf(spec.Owner); sc != nil {
			parent = sc.acct
		}
	}
	r.parent = parent
	r.maxDur = s.budget.duration(spec)
	want := spec.Budget.dims()
	eff := s.budget.dims(want)
	if parent == nil {
		// No pool and no reservation above it: no dimension is pooled,
		// and nothing is reserved (contract.PoolReserve's unpooled case).
		for i := range eff {
			v := contract.Unpooled(eff[i])
			r.m[i].limit, r.pooled[i] = v, v > 0 && want[i] > 0
		}
		return ""
	}
	var lim, avail [numDims]int64
	var src [numDims]*meter
	for i := range eff {
		if sa := parent.source(i); sa != nil {
			if a := sa.avail(i); a >= 0 {
				lim[i], avail[i], src[i] = sa.m[i].limit, a, &sa.m[i]
			}
		}
	}
	function := spec.Target.Kind == KindFunction
	eff, held, short := contract.PoolReserve(lim, avail, want, eff, function)
	if short != "" {
		return short
	}
	for i, v := range eff {
		// A function child that sets no limit in a pooled dimension
		// reserves nothing there: its children reserve from its source.
		r.m[i].limit, r.through[i] = v, src[i] != nil && held[i] == 0
		r.pooled[i] = v > 0 && (held[i] > 0 || want[i] > 0)
		if held[i] > 0 {
			src[i].held.Add(v)
			r.m[i].from = src[i]
		}
	}
	return ""
}

// settleRunLocked refunds what r did not spend to its parent. The parent is charged what r (and its children) spent; tokens
// stay charged in full when a response reported no usage. It is
// idempotent.
func (s *Engine) settleRunLocked(r *run) {
	if r == nil {
		return
	}
	p := r.parent
	if p == nil {
		return
	}
	r.parent = nil
	var limit, used [numDims]int64
	for i := range r.m {
		limit[i], used[i] = r.m[i].limit, r.m[i].used.Load()
	}
	charge := contract.PoolCharge(limit, used, r.unknown.Load() > 0)
	for i := range r.m {
		spent := charge[i]
		if f := r.m[i].from; f != nil {
			// Reserved from f (the parent's meter, or an enclosing one past
			// function children that reserved nothing): refund and charge it.
			f.held.Add(-r.m[i].limit)
			f.used.Add(spent)
			continue
		}
		p.m[i].used.Add(spent)
	}
}
