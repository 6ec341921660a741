package work

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Budget bounds one child run: how many model requests (turns) and tool
// calls it may make, how many tokens (input + output, as the provider
// reports them) it may spend, and how long it may run. A zero field means
// "inherit": the Supervisor's default (WithDefaultBudget); inside a pool or
// a parent child's reservation, an agent child reserves that default
// capped at its share (PoolShare) and at what remains, and a function
// child reserves nothing (see SetPool). The
// Supervisor's ceiling (WithBudgetCeiling) clamps every field: a child can
// lower it, never raise it.
//
// Turns, tool calls and tokens are enforced by the child's agent adapter at
// its model-request boundary (the langchaingo adapter does it): when one
// runs out the child gets one final request with no tools and an
// instruction to answer now, and that answer is the Work's output (a
// partial result). MaxDuration is the child's deadline: reaching it fails
// the Work with class deadline_exceeded, as it always did.
//
// As a pool (WithPool of the adapter, Supervisor.SetPool) a Budget is the
// total its owner's children may reserve; MaxDuration is ignored there.
type Budget struct {
	MaxTurns     int           // model requests, the final one not counted
	MaxToolCalls int           // tool calls the child's agent makes
	MaxTokens    int64         // input + output tokens, as reported by the provider
	MaxDuration  time.Duration // from running; the child's deadline
}

// The budget names, as telemetry reports which one ran out
// (agentwork.work.budget) and as Status.BudgetExhausted says.
const (
	BudgetTurns     = "turns"
	BudgetToolCalls = "tool_calls"
	BudgetTokens    = "tokens"
	BudgetDuration  = "duration"
)

// ClassBudgetExhausted is the failure class of a child whose budget ran out
// when it was started to fail on exhaustion (Spec.FailOnBudget), or that
// kept asking for model requests after its final one.
const ClassBudgetExhausted = "budget_exhausted"

// ErrBudgetExhausted: a start (or a foreground call) that its owner's pool,
// or its parent child's reservation, cannot cover; nothing was started. A
// child's model boundary also returns it when the child may make no more
// requests.
var ErrBudgetExhausted = newError("budget_exhausted", "budget exhausted")

// Usage is what one child run spent, as counts only. InputTokens and
// OutputTokens sum the usage the provider reported; UnknownUsage counts the
// model responses that reported none (their tokens are not in the sums, and
// the run's token reservation stays charged in full).
type Usage struct {
	Turns        int
	ToolCalls    int
	InputTokens  int64
	OutputTokens int64
	UnknownUsage int
}

// Tokens returns InputTokens + OutputTokens.
func (u Usage) Tokens() int64 { return u.InputTokens + u.OutputTokens }

// The dimensions a pool and a reservation account for.
const (
	dimTurns = iota
	dimToolCalls
	dimTokens
	numDims
)

var dimNames = [numDims]string{BudgetTurns, BudgetToolCalls, BudgetTokens}

func (b Budget) dims() [numDims]int64 {
	return [numDims]int64{int64(b.MaxTurns), int64(b.MaxToolCalls), b.MaxTokens}
}

func (b *Budget) setDims(d [numDims]int64) {
	b.MaxTurns, b.MaxToolCalls, b.MaxTokens = int(d[dimTurns]), int(d[dimToolCalls]), d[dimTokens]
}

// meter is one dimension of an account. limit 0 means none. used is what
// was spent (by the run itself, and by its settled children); held is what
// unsettled children reserved. used and held change without the
// Supervisor's lock (used by the running child) or under it (held, and used
// at a child's settlement).
type meter struct {
	limit   int64
	pooled  bool   // children reserve from it: a pool, or a reservation that is explicit or from a pool
	through bool   // a function child's that reserved nothing: its children reserve from its parent's source
	from    *meter // the meter it was reserved from (held there until settlement), or nil
	used    atomic.Int64
	held    atomic.Int64
}

// avail is what the meter can still give children: -1 when they do not
// reserve from it.
func (m *meter) avail() int64 {
	if m.limit <= 0 || !m.pooled {
		return -1
	}
	return max(m.limit-m.used.Load()-m.held.Load(), 0)
}

// account is a pool (a top-level owner's, parent nil) or one child run's
// reservation (parent: the pool or the reservation it was reserved from,
// nil when there is none).
type account struct {
	m      [numDims]meter
	parent *account
}

// run is the budget state of one child run (background or foreground):
// its reservation, its own usage and its boundary phase.
type run struct {
	account
	s      *Supervisor
	budget Budget // effective
	fail   bool
	emit   func(Event) // delivers a foreground call's budget event (never under s.mu)
	it     *item       // a background run's Work: its budget events go with its others

	ownTurns, ownTools atomic.Int64 // the run's own requests and tool calls
	in, out            atomic.Int64 // tokens the provider reported
	unknown            atomic.Int32 // responses without usage

	mu        sync.Mutex
	exhausted string // the budget that ran out, once one did
	phase     uint8  // phaseOrdinary, phaseFinal (granted), phaseRefused
}

const (
	phaseOrdinary uint8 = iota
	phaseFinal
	phaseRefused
)

// budgets is the Supervisor's budget accounting, guarded by s.mu.
type budgets struct {
	// pools are the top-level owners' pools by owner id (a child's
	// scope reaches its reservation through scope.acct).
	pools map[string]*account
}

// budgetConfig is the Supervisor's budget configuration.
type budgetConfig struct {
	def, ceiling Budget
}

// Default budgets: a child that sets none gets these (the Supervisor's
// WithDefaultBudget replaces them). Tokens have no default limit, as not
// every provider reports usage.
const (
	DefaultMaxTurns     = 50
	DefaultMaxToolCalls = 100
)

// WithDefaultBudget sets the budget of a child that leaves a field zero
// (default: 50 turns, 100 tool calls, no token limit, and the duration of
// WithMaxDuration). A zero field keeps the current default; a negative one
// means "no limit" for that field.
func WithDefaultBudget(b Budget) Option {
	return optionFunc(func(c *config) {
		d := c.budget.def.dims()
		for i, v := range b.dims() {
			if v != 0 {
				d[i] = max(v, 0)
			}
		}
		c.budget.def.setDims(d)
		if b.MaxDuration != 0 {
			c.maxDuration = max(b.MaxDuration, 0)
		}
	})
}

// WithBudgetCeiling sets the most any child may have (default: none): a
// child's larger or absent (unlimited) value becomes the ceiling's. Zero
// fields set no ceiling. MaxDuration clamps per-child durations too.
func WithBudgetCeiling(b Budget) Option {
	return optionFunc(func(c *config) {
		d := b.dims()
		for i := range d {
			d[i] = max(d[i], 0)
		}
		c.budget.ceiling.setDims(d)
		c.budget.ceiling.MaxDuration = max(b.MaxDuration, 0)
	})
}

// resolveDim returns one dimension of a child's budget before any pool:
// its own limit want, else the default def, clamped to the ceiling ceil.
func resolveDim(want, def, ceil int64) int64 {
	v := want
	if v <= 0 {
		v = def
	}
	if ceil > 0 && (v <= 0 || v > ceil) {
		v = ceil
	}
	return v
}

// EffectiveBudget returns the budget a child started with spec runs with
// under s, pools aside: its own limits, else the defaults
// (WithDefaultBudget), clamped to the ceiling (WithBudgetCeiling), and its
// deadline. An Engine that runs children elsewhere resolves budgets with
// it, as the Supervisor does.
func (s *Supervisor) EffectiveBudget(spec Spec) Budget {
	want, def, ceil := spec.Budget.dims(), s.cfg.budget.def.dims(), s.cfg.budget.ceiling.dims()
	var eff [numDims]int64
	for i := range eff {
		eff[i] = max(resolveDim(want[i], def[i], ceil[i]), 0)
	}
	var b Budget
	b.setDims(eff)
	b.MaxDuration = s.cfg.duration(&spec)
	return b
}

func defaultBudgetConfig() budgetConfig {
	return budgetConfig{def: Budget{MaxTurns: DefaultMaxTurns, MaxToolCalls: DefaultMaxToolCalls}}
}

// duration resolves a child's deadline: its own (Spec.MaxDuration, else
// Budget.MaxDuration), else the Supervisor's default (WithMaxDuration),
// clamped to the ceiling: WithBudgetCeiling's MaxDuration when set, else
// the Supervisor's default itself, so a child can lower but never raise it.
func (c *config) duration(spec *Spec) time.Duration {
	d := spec.MaxDuration
	if d <= 0 {
		d = spec.Budget.MaxDuration
	}
	ceil := c.budget.ceiling.MaxDuration
	if ceil <= 0 {
		return clamp(d, c.maxDuration)
	}
	if d <= 0 {
		d = c.maxDuration
	}
	if d <= 0 || d > ceil {
		d = ceil
	}
	return d
}

// SetPool gives the top-level owner o a pool: the total turns, tool calls
// and tokens all of the Work (and foreground calls) it starts may reserve.
// Each start reserves its child's budget from it: a child's own limits
// (Spec.Budget) in full; where it sets none, an agent child its default
// capped at 1/PoolShare of the pool and at what remains, a function child
// nothing (its own children reserve from the pool instead). A start it
// cannot cover
// fails with ErrBudgetExhausted before any Work exists; when the child
// settles, what it did not spend is refunded. A zero field leaves that
// dimension unpooled. Calling SetPool again replaces the limits and keeps
// what is reserved and spent. Release forgets the pool.
//
// SetPool fails with ErrInvalidOwner for the zero Owner or a child's scope
// (its children reserve from the child's own reservation).
func (s *Supervisor) SetPool(o Owner, b Budget) error {
	if err := validOwner(o); err != nil {
		return err
	}
	if o.depth > 0 {
		return errorf(ErrInvalidOwner, "a child's scope has no pool of its own: its children reserve from the child's reservation")
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
		a.m[i].limit, a.m[i].pooled = max(v, 0), v > 0
	}
	return nil
}

// PoolState is a pool's state: its limits, what unsettled children
// reserved and what settled ones spent (MaxDuration unused).
type PoolState struct {
	Limit, Reserved, Spent Budget
}

// Pool returns the state of o's pool, and whether o has one.
func (s *Supervisor) Pool(o Owner) (PoolState, bool) {
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

// PoolCensus calls fn once per budget name (turns, tool_calls, tokens) with
// the sums over the Supervisor's pools that limit it: reserved by unsettled
// children and remaining. It holds the Supervisor's lock while it runs: fn
// must be quick and must not call the Supervisor.
func (s *Supervisor) PoolCensus(fn func(budget string, reserved, remaining int64)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var held, rem [numDims]int64
	var any [numDims]bool
	for _, a := range s.bud.pools {
		for i := range a.m {
			if a.m[i].limit > 0 {
				any[i] = true
				held[i] += a.m[i].held.Load()
				rem[i] += a.m[i].avail()
			}
		}
	}
	for i, name := range dimNames {
		if any[i] {
			fn(name, held[i], rem[i])
		}
	}
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

// source returns the meter a child of a reserves from in dimension i: a's,
// or, where a is a function child that reserved nothing there, the
// nearest enclosing account's that did. nil when there is none.
func (a *account) source(i int) *meter {
	for ; a != nil; a = a.parent {
		if !a.m[i].through {
			return &a.m[i]
		}
	}
	return nil
}

// reserveLocked resolves spec's budget for a child of owner and reserves
// it from the owner's pool or reservation. It returns the run, or the
// budget that cannot be covered. scope is the id the child's own scope will
// have: its children reserve from this run.
//
// In a pooled dimension (the owner's pool, or a parent child's reservation
// that is explicit or from a pool), a child that sets its own limit
// reserves it, refused when it does not fit. A child that sets none
// reserves, if it is an agent, its default capped at its PoolShare of the
// pool and at what remains (refused when nothing remains); if it is a
// function (no model requests of its own), nothing: its own children then
// reserve from the pool as if they were the function's siblings, so that
// no descendant escapes it.
//
// r is the caller's zero run, which reserveLocked fills in.
func (s *Supervisor) reserveLocked(spec *Spec, r *run) string {
	r.s, r.fail = s, spec.FailOnBudget
	// A top-level owner's account is its pool; a child's scope's is the
	// child's reservation, reached through the scope (whose Start the
	// scope's end refuses before this).
	parent := s.bud.pools[spec.Owner.id]
	if spec.Owner.depth > 0 {
		parent = nil
		if sc := spec.Owner.sc; sc != nil {
			parent = sc.acct
		}
	}
	r.parent = parent
	want := spec.Budget.dims()
	def, ceil := s.cfg.budget.def.dims(), s.cfg.budget.ceiling.dims()
	var eff [numDims]int64
	var src [numDims]*meter
	var through [numDims]bool
	for i := range eff {
		v, explicit := resolveDim(want[i], def[i], ceil[i]), want[i] > 0
		if m := parent.source(i); m != nil {
			if avail := m.avail(); avail >= 0 {
				if !explicit && spec.Target.Kind == KindFunction {
					through[i] = true
					continue
				}
				share := (m.limit + PoolShare - 1) / PoolShare
				switch {
				case avail == 0 || (explicit && v > avail):
					return dimNames[i]
				case !explicit && (v <= 0 || v > share):
					v = share
				}
				v = min(v, avail)
				src[i] = m
			}
		}
		eff[i] = max(v, 0)
	}
	for i, v := range eff {
		r.m[i].limit, r.m[i].through = v, through[i]
		r.m[i].pooled = v > 0 && (src[i] != nil || want[i] > 0)
		if src[i] != nil {
			src[i].held.Add(v)
			r.m[i].from = src[i]
		}
	}
	r.budget.setDims(eff)
	r.budget.MaxDuration = s.cfg.duration(spec)
	return ""
}

// settleRunLocked refunds what r did not spend to its parent. The parent is charged what r (and its children) spent; tokens
// stay charged in full when a response reported no usage. It is
// idempotent.
func (s *Supervisor) settleRunLocked(r *run) {
	if r == nil {
		return
	}
	p := r.parent
	if p == nil {
		return
	}
	r.parent = nil
	for i := range r.m {
		spent := r.m[i].used.Load()
		if i == dimTokens && r.unknown.Load() > 0 && r.m[i].limit > 0 {
			spent = max(spent, r.m[i].limit)
		}
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

// usage returns what r spent itself.
func (r *run) usage() Usage {
	if r == nil {
		return Usage{}
	}
	return Usage{Turns: int(r.turns()), ToolCalls: int(r.toolCalls()),
		InputTokens: r.in.Load(), OutputTokens: r.out.Load(), UnknownUsage: int(r.unknown.Load())}
}

func (r *run) turns() int64     { return r.ownTurns.Load() }
func (r *run) toolCalls() int64 { return r.ownTools.Load() }

// exhaustedBudget returns the budget that ran out, or "".
func (r *run) exhaustedBudget() string {
	if r == nil {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.exhausted
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
	if r.exhausted != "" {
		return false
	}
	r.exhausted = budget
	return true
}

// reached returns the first dimension whose limit is spent, or "".
func (r *run) reached() string {
	for i := range r.m {
		if m := &r.m[i]; m.limit > 0 && m.used.Load()+m.held.Load() >= m.limit {
			return dimNames[i]
		}
	}
	return ""
}

// forgetPoolLocked drops the pool of the top-level owner id. Children
// still holding reservations settle into the forgotten account.
func (s *Supervisor) forgetPoolLocked(id string) {
	delete(s.bud.pools, id)
}

// emitWork delivers a background Work's budget event, in order with its
// other events.
func (s *Supervisor) emitWork(it *item, ev Event) {
	var e emission
	s.mu.Lock()
	if it.state.Terminal() {
		s.mu.Unlock()
		return
	}
	e.add(it, ev)
	s.unlockAndEmit(&e)
}

// foregroundEmitter returns the function that delivers a foreground
// call's budget events, with the call's execution context.
func (s *Supervisor) foregroundEmitter(exec context.Context, spec Spec) func(Event) {
	return func(ev Event) {
		ev.Owner, ev.Depth, ev.Target, ev.Kind = spec.Owner.id, spec.Owner.depth, spec.Target.Label, spec.Target.Kind
		s.cfg.observer.Event(exec, ev)
	}
}

// endRunLocked queues the events of a background run's end: the duration
// budget running out (class deadline_exceeded), then its usage.
func (s *Supervisor) endRunLocked(it *item, class string, e *emission) {
	r := it.budget
	if r == nil {
		return
	}
	now := s.nowLocked(e)
	if class == ClassDeadline {
		r.mu.Lock()
		first := r.exhaustLocked(BudgetDuration)
		r.mu.Unlock()
		if first {
			e.push(it, EventBudgetExhausted, now).Budget = BudgetDuration
		}
	}
	if u := r.usage(); u != (Usage{}) {
		e.push(it, EventUsage, now).Usage = u
	}
}

// endForeground reports a foreground run's end (as endRunLocked does) and
// settles its reservation.
func (s *Supervisor) endForeground(r *run, scopeID string, exec context.Context) {
	if errors.Is(context.Cause(exec), errDeadline) {
		r.mu.Lock()
		first := r.exhaustLocked(BudgetDuration)
		r.mu.Unlock()
		if first {
			r.report(Event{Type: EventBudgetExhausted, Budget: BudgetDuration})
		}
	}
	if u := r.usage(); u != (Usage{}) {
		r.report(Event{Type: EventUsage, Usage: u})
	}
	s.mu.Lock()
	s.settleRunLocked(r)
	s.mu.Unlock()
}
