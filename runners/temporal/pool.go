package temporal

import (
	"github.com/agentwork/agentwork/work"
)

// pool is a top-level owner's budget pool, kept by its registry: the
// limits, what unsettled Work reserved and what settled Work spent, in the
// order of work.Budget.Dims.
type pool struct {
	Limit, Held, Used [3]int64
}

// reserve resolves a start's budget against the pool (work.PoolReserve):
// it returns the budget the child runs with and what it reserves, or the
// name of the dimension that cannot be covered. It changes nothing. The
// registry has no nested accounts: a child's scope reserves from its
// owner's pool only through the child's own Work.
func (p *pool) reserve(want, eff [3]int64, function bool) (run, held [3]int64, short string) {
	if p == nil {
		return work.PoolReserve([3]int64{}, [3]int64{}, want, eff, function)
	}
	var avail [3]int64
	for i := range avail {
		avail[i] = max(p.Limit[i]-p.Used[i]-p.Held[i], 0)
	}
	return work.PoolReserve(p.Limit, avail, want, eff, function)
}

// settle refunds a settled Work's reservation and charges what it spent
// (work.PoolCharge, with the reservation as the run's limit: in a pooled
// dimension they are the same). spent is nil when the attempt's usage is
// unknown (its worker died): the reservation is then charged in full.
func (p *pool) settle(held [3]int64, spent *work.Usage) {
	if p == nil {
		return
	}
	charge := held
	if spent != nil {
		charge = work.PoolCharge(held, spent.Dims(), spent.UnknownUsage > 0)
	}
	for i := range held {
		p.Held[i] = max(p.Held[i]-held[i], 0)
		p.Used[i] += charge[i]
	}
}
