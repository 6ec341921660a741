package driver

import "github.com/agentwork/agentwork/work"

// Pool is a top-level owner's budget pool, kept by its registry: the
// limits, what unsettled Work reserved and what settled Work spent, in the
// order of work.Budget.Dims. The registry has no nested accounts: a
// child's scope reserves from its owner's pool only through the child's
// own Work.
type Pool struct {
	Limit, Held, Used [3]int64
}

// Reserve resolves a start's budget against p (work.PoolReserve; p nil:
// no pool): the budget the child runs with and what it reserves, or the
// name of the dimension that cannot be covered. It changes nothing.
func (p *Pool) Reserve(want, eff [3]int64, function bool) (run, held [3]int64, short string) {
	if p == nil {
		return work.PoolReserve([3]int64{}, [3]int64{}, want, eff, function)
	}
	var avail [3]int64
	for i := range avail {
		avail[i] = max(p.Limit[i]-p.Used[i]-p.Held[i], 0)
	}
	return work.PoolReserve(p.Limit, avail, want, eff, function)
}

// Settle refunds a settled Work's reservation held and charges what it
// spent (work.PoolCharge, with the reservation as the run's limit: in a
// pooled dimension they are the same). spent nil (the attempt's usage is
// unknown: its process died) charges the reservation in full.
func (p *Pool) Settle(held [3]int64, spent *work.Usage) {
	if p == nil {
		return
	}
	charge := held
	if spent != nil {
		charge = work.PoolCharge(held, *spent)
	}
	for i := range held {
		p.Held[i] = max(p.Held[i]-held[i], 0)
		p.Used[i] += charge[i]
	}
}
