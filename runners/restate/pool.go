package restate

import "github.com/agentwork/agentwork/work"

// reserve resolves a start's budget against the pool (work.PoolReserve):
// the budget the child runs with and what it reserves, or the dimension
// that cannot be covered. It changes nothing.
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
// (work.PoolCharge); spent nil (the attempt was lost) charges it all.
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
