package work

import (
	"context"

	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/internal/limit"
	"github.com/agentwork/agentwork/work/internal/seam"
	"github.com/agentwork/agentwork/work/internal/updatelog"
	"github.com/agentwork/agentwork/work/observe"
)

// SlotsForTest reports the pool slots in use, the running Works that
// execute (neither lending their slot nor waiting to reclaim it), and the
// Works waiting to reclaim a slot. It checks the lending chains on the way
// and panics if one is broken.
func (s *Engine) SlotsForTest() (used, executing, reclaiming int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for it := s.running.front(); it != nil; it = it.next {
		if !it.lending && it.reclaim() == nil {
			executing++
		}
		if it.borrower() != nil && it.borrower().lender() != it {
			panic("work: borrower does not point back at its lender")
		}
		if it.lender() != nil && it.lender().borrower() != it {
			panic("work: lender does not point at its borrower")
		}
	}
	return s.used, executing, len(s.reclaimers)
}

// SetReclaimHookForTest sets a function called (under the engine's
// lock: it must not block or call back) each time a Work starts waiting to
// reclaim its slot.
func (s *Engine) SetReclaimHookForTest(f func()) {
	s.mu.Lock()
	s.reclaimHook = f
	s.mu.Unlock()
}

// SetBoundaryHookForTest sets a function called (under the engine's
// lock: it must not block or call back) each time a model-request boundary
// starts waiting for its Work's slot.
func (s *Engine) SetBoundaryHookForTest(f func()) {
	s.mu.Lock()
	s.boundHook = f
	s.mu.Unlock()
}

// Unexported names the external tests use.
const (
	ProfileLabel     = profileLabel
	ProgressInterval = progressInterval
)

// ApprovalCallRefusal is a foreground call's refusal of a Spec that
// needs approval.
var ApprovalCallRefusal = errCallApproval

// CanTransition reports whether from -> to is a legal lifecycle edge.
func CanTransition(from, to observe.State) bool { return canTransition(from, to) }

// RefKind returns r's JSON kind.
func RefKind(r Ref) string { return r.kind() }

// CensusForTest calls fn once for every known target label and state with the
// number of Works in the registry in that state (visible or detached, zero
// included). It holds the engine's lock while it runs: fn must be quick
// and must not call the engine.
func (s *Engine) CensusForTest(fn func(target string, state observe.State, n int)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for label, c := range s.counts {
		for i, st := range observe.States {
			fn(label, st, c[i])
		}
	}
}

// PoolState is a pool's state: its limits, what unsettled children
// reserved and what settled ones spent (MaxDuration unused).
type PoolState struct {
	Limit, Reserved, Spent Budget
}

// PoolForTest returns the state of o's pool, and whether o has one.
func (s *Engine) PoolForTest(o Owner) (PoolState, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.bud.pools[o.id]
	if a == nil {
		return PoolState{}, false
	}
	var lim, held, used [numDims]int64
	for i := range a.m {
		lim[i], held[i], used[i] = a.m[i].limit, a.m[i].held.Load(), a.m[i].used.Load()
	}
	var p PoolState
	p.Limit.setDims(lim)
	p.Reserved.setDims(held)
	p.Spent.setDims(used)
	return p, true
}

// PoolCensusForTest calls fn once per budget name (turns, tool_calls, tokens) with
// the sums over the engine's pools that limit it: reserved by unsettled
// children and remaining. It holds the engine's lock while it runs: fn
// must be quick and must not call the engine.
func (s *Engine) PoolCensusForTest(fn func(budget string, reserved, remaining int64)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.poolTotalsLocked(fn)
}

// BudgetForTest returns the child's effective budget: its own, the engine's
// defaults and ceiling, and its pool applied. It is the zero Budget for a
// context that is no child run.
func (e *Execution) BudgetForTest() Budget {
	if e == nil {
		return Budget{}
	}
	if e.run() == nil {
		return Budget{}
	}
	return e.run().budget()
}

// LimitsForTest returns s's effective limits.
func (s *Engine) LimitsForTest() Limits { return s.lim }

// ReportProgressForTest is Execution.reportProgress.
func (e *Execution) ReportProgressForTest(done, total int64) { e.reportProgress(done, total) }

// MaxErrorMessageForTest is the longest message DecodeError reads.
const MaxErrorMessageForTest = maxErrorMessage

// The defaults the options document, for the external tests (they are
// not exported: each option's doc comment gives its value, and
// TestDocumentedDefaults holds the two together).
const (
	DefaultMaxRunning             = defaultMaxRunning
	DefaultMaxOutstanding         = defaultMaxOutstanding
	DefaultMaxStarts              = defaultMaxStarts
	DefaultMaxDepth               = defaultMaxDepth
	DefaultMaxDuration            = defaultMaxDuration
	DefaultMaxResultBytes         = defaultMaxResultBytes
	DefaultMaxMessageBytes        = defaultMaxMessageBytes
	DefaultMaxQueuedGuidance      = defaultMaxQueuedGuidance
	DefaultMaxQueuedGuidanceBytes = defaultMaxQueuedGuidanceBytes
	DefaultMaxTurns               = defaultMaxTurns
	DefaultMaxToolCalls           = defaultMaxToolCalls
	DefaultMaxUpdates             = updatelog.DefaultMaxUpdates
	DefaultMaxUpdateBytes         = updatelog.DefaultMaxBytes
	DefaultQuestionTimeout        = updatelog.DefaultQuestionTimeout
)

// CountModelRequestForTest adds one to e's ModelRequests progress count
// without a budget decision (BeginRequest counts one with each request it
// grants).
func (e *Execution) CountModelRequestForTest() { e.countRequest() }

// CountToolCallForTest adds one to e's ToolCalls progress count without a
// budget decision (BeginToolCall counts one with each call it allows).
func (e *Execution) CountToolCallForTest() { e.countTool() }

// NewSubscription is the Subscription work/driver feeds (through package
// seam), for the tests of its notices.
var NewSubscription = newSubscription

// WithRemote returns ctx carrying the Execution of remote run r, as
// work/driver's WithRemote does.
func WithRemote(ctx context.Context, r seam.Remote) context.Context {
	ctx, _ = attachRemote(ctx, r)
	return ctx
}

// ExhaustedForTest is what work/driver reads of a run's budget (package
// seam's Exhausted).
func (e *Execution) ExhaustedForTest() (budget string, refused bool) { return seam.Exhausted(e) }

// Limits and ResolveLimits are work/driver's, for the tests of the
// options' meanings.
type Limits = limit.Limits

func ResolveLimits(opts ...Option) (Limits, error) { return seam.ResolveLimits(opts) }

// DecodeError and UpdateRefusal are work/driver's (through package
// seam), for the tests of the errors' codes.
var (
	DecodeError   = decodeError
	UpdateRefusal = updateRefusal
)

// MaxLaunchRecords is the launch identities an owner's engine remembers.
const MaxLaunchRecords = contract.MaxLaunches

// PollClassForTest is the class a failed poll of class ends its Work with.
func PollClassForTest(class string) string { return contract.PollClass(class, ClassError) }

// EffectiveBudget is the budget work/driver resolves for a durable child
// (package seam's EffectiveBudget).
func (s *Engine) EffectiveBudget(spec Spec) Budget {
	dims, maxDur := seam.EffectiveBudget(s, spec.Budget.dims(), spec.Budget.MaxDuration)
	b := Budget{MaxDuration: maxDur}
	b.setDims(dims)
	return b
}

// Detail and Wrap are work/driver's (through package seam), for the tests
// of the errors.
func (e *Error) Detail(detail string) *Error { return e.detail(detail) }
func (e *Error) Wrap(cause error) *Error     { return e.wrap(cause) }
