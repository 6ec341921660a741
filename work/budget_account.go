package work

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/observe"
)

// meter is one dimension of an account. limit 0 means none. used is what
// was spent (by the run itself, and by its settled children); held is what
// unsettled children reserved. used and held change without the
// engine's lock (used by the running child) or under it (held, and used
// at a child's settlement). Its flags are its account's (pooled, through).
type meter struct {
	limit int64
	from  *meter // the meter it was reserved from (held there until settlement), or nil
	used  atomic.Int64
	held  atomic.Int64
}

// account is a pool (a top-level owner's, parent nil) or one child run's
// reservation (parent: the pool or the reservation it was reserved from,
// nil when there is none).
type account struct {
	m      [numDims]meter
	parent *account
	// pooled: children reserve from the meter (a pool, or a reservation
	// that is explicit or from a pool). through: a function child's that
	// reserved nothing; its children reserve from its parent's source.
	pooled, through [numDims]bool
}

// avail is what a's meter i can still give children: -1 when they do not
// reserve from it.
func (a *account) avail(i int) int64 {
	m := &a.m[i]
	if m.limit <= 0 || !a.pooled[i] {
		return -1
	}
	return max(m.limit-m.used.Load()-m.held.Load(), 0)
}

// run is the budget state of one child run (background or foreground):
// its reservation, its own usage and its boundary phase.
type run struct {
	account
	maxDur time.Duration // the effective MaxDuration (the other limits are the meters')
	rt     childRuntime  // what runs the child, which delivers its budget events (report; never under the engine's lock)

	ownTurns, ownTools atomic.Int64 // the run's own requests and tool calls
	in, out            atomic.Int64 // tokens the provider reported
	unknown            atomic.Int32 // responses without usage
	// exh is the budget that ran out, once one did: an index in
	// exhaustedNames (0: none), set once under mu and read without it.
	exh atomic.Uint32

	fail  bool
	phase uint8 // phaseOrdinary, phaseFinal (granted), phaseRefused
	mu    sync.Mutex
}

// exhaustedNames are the budgets that can run out, at their run.exh.
var exhaustedNames = [...]string{"", observe.BudgetTurns, observe.BudgetToolCalls, observe.BudgetTokens, observe.BudgetDuration}

// budget returns r's effective budget.
func (r *run) budget() Budget {
	var b Budget
	var d [numDims]int64
	for i := range r.m {
		d[i] = r.m[i].limit
	}
	b.setDims(d)
	b.MaxDuration = r.maxDur
	return b
}

// exhaustedLocked returns the budget that ran out, or "". Must be called
// with r.mu held.
func (r *run) exhaustedLocked() string { return exhaustedNames[r.exh.Load()] }

const (
	phaseOrdinary uint8 = iota
	phaseFinal
	phaseRefused
)

// source returns the account whose meter i a child of a reserves from:
// a, or, where a is a function child that reserved nothing there, the
// nearest enclosing account that did. nil when there is none.
func (a *account) source(i int) *account {
	for ; a != nil; a = a.parent {
		if !a.through[i] {
			return a
		}
	}
	return nil
}

// usage returns what r spent itself.
func (r *run) usage() observe.Usage {
	if r == nil {
		return observe.Usage{}
	}
	return observe.Usage{Turns: int(r.turns()), ToolCalls: int(r.toolCalls()),
		InputTokens: r.in.Load(), OutputTokens: r.out.Load(), UnknownUsage: int(r.unknown.Load())}
}

func (r *run) turns() int64     { return r.ownTurns.Load() }
func (r *run) toolCalls() int64 { return r.ownTools.Load() }

// exhaustedBudget returns the budget that ran out, or "".
func (r *run) exhaustedBudget() string {
	if r == nil {
		return ""
	}
	return exhaustedNames[r.exh.Load()]
}

// refused reports whether the boundary refused a request.
func (r *run) refused() bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.phase == phaseRefused
}

// exhaust records that budget ran out (once) and returns whether this call
// did it. Must be called with r.mu held.
func (r *run) exhaustLocked(budget string) bool {
	if r.exh.Load() != 0 {
		return false
	}
	for i, n := range exhaustedNames {
		if n == budget && i > 0 {
			r.exh.Store(uint32(i))
			return true
		}
	}
	panic("work: no such budget: " + budget)
}

// reached returns the first dimension whose limit is spent, or "".
func (r *run) reached() string {
	for i := range r.m {
		if m := &r.m[i]; m.limit > 0 && m.used.Load()+m.held.Load() >= m.limit {
			return contract.DimNames[i]
		}
	}
	return ""
}
