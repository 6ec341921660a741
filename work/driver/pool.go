package driver

import (
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/observe"
)

// Pool is a top-level owner's budget pool, kept by its registry: the
// limits, what unsettled Work reserved and what settled Work spent, in the
// order of BudgetDims. The registry has no nested accounts: a
// child's scope reserves from its owner's pool only through the child's
// own Work.
type Pool struct {
	Limit, Held, Used [3]int64
}

// Reserve resolves a start's budget against p (the in-process engine's
// rule, as work's SetPool documents; p nil: no pool): the budget the child
// runs with and what it reserves, or the name of the dimension that cannot
// be covered. It changes nothing.
func (p *Pool) Reserve(want, eff [3]int64, function bool) (run, held [3]int64, short string) {
	if p == nil {
		return contract.PoolReserve([3]int64{}, [3]int64{}, want, eff, function)
	}
	var avail [3]int64
	for i := range avail {
		avail[i] = max(p.Limit[i]-p.Used[i]-p.Held[i], 0)
	}
	return contract.PoolReserve(p.Limit, avail, want, eff, function)
}

// Settle refunds a settled Work's reservation held and charges what it
// spent, as the in-process engine does: tokens at least the reservation
// when any of the run's responses reported no usage (spent.UnknownUsage; in
// a pooled dimension the reservation is the run's limit). spent nil (the
// attempt's usage is unknown: its process died) charges the reservation in
// full.
func (p *Pool) Settle(held [3]int64, spent *observe.Usage) {
	if p == nil {
		return
	}
	charge := held
	if spent != nil {
		charge = contract.PoolCharge(held, contract.Dims(spent.Turns, spent.ToolCalls, spent.Tokens()), spent.UnknownUsage > 0)
	}
	for i := range held {
		p.Held[i] = max(p.Held[i]-held[i], 0)
		p.Used[i] += charge[i]
	}
}

// BudgetDims returns b's pooled dimensions (turns, tool calls, tokens) in
// the order of every pool and reservation: a Pool's arrays, and the
// budget a runner carries to its service as plain data. MaxDuration is
// not pooled.
func BudgetDims(b work.Budget) [3]int64 {
	return contract.Dims(b.MaxTurns, b.MaxToolCalls, b.MaxTokens)
}

// SetBudgetDims sets b's pooled dimensions from d, the inverse of
// BudgetDims.
func SetBudgetDims(b *work.Budget, d [3]int64) {
	b.MaxTurns, b.MaxToolCalls, b.MaxTokens = contract.FromDims(d)
}
