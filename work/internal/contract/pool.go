package contract

import "github.com/agentwork/agentwork/work/observe"

// The pooled dimensions of a budget, in the order of every [3]int64 a
// pool, a reservation and a charge are kept in.
const (
	DimTurns = iota
	DimToolCalls
	DimTokens
)

// DimNames are the dimensions' names (observe's budget names), in the
// order of the Dim constants.
var DimNames = [3]string{DimTurns: observe.BudgetTurns, DimToolCalls: observe.BudgetToolCalls, DimTokens: observe.BudgetTokens}

// Dims returns a budget's (or a usage's) pooled dimensions in their
// order.
func Dims(turns, toolCalls int, tokens int64) [3]int64 {
	return [3]int64{DimTurns: int64(turns), DimToolCalls: int64(toolCalls), DimTokens: tokens}
}

// FromDims returns the dimensions of d by name, the inverse of Dims.
func FromDims(d [3]int64) (turns, toolCalls int, tokens int64) {
	return int(d[DimTurns]), int(d[DimToolCalls]), d[DimTokens]
}

// PoolShare is the divisor of an unbudgeted child's share of a pool: an
// agent child that sets no limit of its own in a pooled dimension reserves
// its default there, but at most 1/PoolShare of the pool's limit (rounded
// up), and at most what remains; where it has no default (tokens), it
// reserves that share. So one child without a budget never takes a whole
// pool: with a pool of 20 turns and 200,000 tokens it reserves 5 turns and
// 50,000 tokens, and four such children fit. The same holds inside a
// parent child's reservation.
const PoolShare = 4

// PoolReserve resolves a start's budget against a pool, as work's SetPool
// documents, dimension by dimension in the order of Dims. limit is the
// pool's limits (0 or less: that dimension is not pooled), avail what
// remains of each (limit less reserved and spent, at least 0), want the
// child's own limits (Spec.Budget), eff its budget with the engine's
// defaults and ceiling applied, function whether it is a function child.
//
// In a pooled dimension a child that sets its own limit reserves it,
// refused when it does not fit; one that sets none reserves, if it is an
// agent, eff capped at 1/PoolShare of the limit (rounded up; the share
// when eff is 0) and at what remains, refused when nothing remains; a
// function child that sets none reserves nothing and runs with no limit
// there (its own children reserve from the pool). Elsewhere the child runs
// with Unpooled(eff). PoolReserve returns the budget the child runs with
// and what it reserves, or the name of the first dimension that cannot be
// covered (DimNames). It changes nothing and does not allocate.
func PoolReserve(limit, avail, want, eff [3]int64, function bool) (run, held [3]int64, short string) {
	for i := range run {
		v, explicit := eff[i], want[i] > 0
		if limit[i] <= 0 {
			run[i] = Unpooled(v)
			continue
		}
		if !explicit && function {
			continue
		}
		a := max(avail[i], 0)
		share := (limit[i] + PoolShare - 1) / PoolShare
		switch {
		case a == 0 || (explicit && v > a):
			return run, held, DimNames[i]
		case !explicit && (v <= 0 || v > share):
			v = share
		}
		v = min(v, a)
		run[i], held[i] = v, v
	}
	return run, held, ""
}

// Unpooled is the limit a child runs with in a dimension that is not
// pooled, from eff (its own limit, else the default, within the ceiling):
// eff, at least 0. It reserves nothing there.
func Unpooled(eff int64) int64 { return max(eff, 0) }

// PoolCharge returns what a settled run is charged, in the order of Dims:
// what it spent, except that tokens are charged at least the run's token
// limit (limit, what it ran with) when any of its responses reported no
// usage (unknownUsage), since what those cost is unknown. The engine
// refunds the run's reservation and adds the charge to what was spent.
func PoolCharge(limit, spent [3]int64, unknownUsage bool) [3]int64 {
	if unknownUsage && limit[DimTokens] > 0 {
		spent[DimTokens] = max(spent[DimTokens], limit[DimTokens])
	}
	return spent
}
