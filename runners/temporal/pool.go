package temporal

import (
	"github.com/agentwork/agentwork/work"
)

// The budget dimensions a pool accounts for, in this order.
const numDims = 3

var dimNames = [numDims]string{work.BudgetTurns, work.BudgetToolCalls, work.BudgetTokens}

func dims(b work.Budget) [numDims]int64 {
	return [numDims]int64{int64(b.MaxTurns), int64(b.MaxToolCalls), b.MaxTokens}
}

func setDims(b *work.Budget, d [numDims]int64) {
	b.MaxTurns, b.MaxToolCalls, b.MaxTokens = int(d[0]), int(d[1]), d[2]
}

// pool is a top-level owner's budget pool, kept by its registry: the
// limits, what unsettled Work reserved and what settled Work spent.
type pool struct {
	Limit, Held, Used [numDims]int64
}

// reserve resolves a start's budget against the pool, as
// work.Supervisor.SetPool documents: in a limited dimension, a child that
// sets its own limit (want) reserves it, refused when it does not fit; one
// that sets none reserves, if it is an agent, its resolved budget (eff)
// capped at its work.PoolShare of the pool and at what remains (refused
// when nothing remains); a function child that sets none reserves nothing
// (it makes no model requests). It returns the budget the child runs with
// and what it reserves, or the name of the dimension that cannot be
// covered. It changes nothing.
func (p *pool) reserve(want, eff [numDims]int64, function bool) (run, held [numDims]int64, short string) {
	run = eff
	if p == nil {
		return run, held, ""
	}
	for i := range run {
		limit := p.Limit[i]
		if limit <= 0 {
			continue
		}
		v, explicit := eff[i], want[i] > 0
		if !explicit && function {
			run[i] = 0
			continue
		}
		avail := max(limit-p.Used[i]-p.Held[i], 0)
		share := (limit + work.PoolShare - 1) / work.PoolShare
		switch {
		case avail == 0 || (explicit && v > avail):
			return run, held, dimNames[i]
		case !explicit && (v <= 0 || v > share):
			v = share
		}
		v = min(v, avail)
		run[i], held[i] = v, v
	}
	return run, held, ""
}

// settle refunds a settled Work's reservation and charges what it spent.
// spent is nil when the attempt's usage is unknown (its worker died): the
// reservation is then charged in full, as for tokens of a run whose
// provider reported no usage.
func (p *pool) settle(held [numDims]int64, spent *work.Usage) {
	if p == nil {
		return
	}
	for i := range held {
		p.Held[i] = max(p.Held[i]-held[i], 0)
		charge := held[i]
		if spent != nil {
			s := [numDims]int64{int64(spent.Turns), int64(spent.ToolCalls), spent.Tokens()}[i]
			if i == 2 && spent.UnknownUsage > 0 && held[i] > 0 {
				s = max(s, held[i])
			}
			charge = s
		}
		p.Used[i] += charge
	}
}
