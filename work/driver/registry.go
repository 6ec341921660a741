package driver

import (
	"slices"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/observe"
)

// Registry is an owner's registry as both durable engines keep it (the
// state of Temporal's owner workflow, of Restate's owner object): the
// records of the owner's Work, the launch identities it used, its starts
// and admission sequence, its retention and its pool. Its methods are the
// registry's decisions, written once: deterministic (a Temporal workflow
// applies them), and content-free. Its field names are wire format (the
// engines embed it, so they stand at the top of their state).
type Registry struct {
	Records []Record
	// Launches are the launch identities used, oldest first, at most
	// 256 (work.Spec.CallID documents the bound).
	Launches []Launch `json:",omitempty"`
	Starts   int
	Seq      int64
	// Retain and RetainAge are the retention bounds (work.WithRetention)
	// of the last admission; RetainAge 0 is none.
	Retain    int
	RetainAge time.Duration `json:",omitempty"`
	Pool      *Pool         `json:",omitempty"`
}

// Launch is a launch identity the owner used: the SHA-256 of its
// tool-call id (Key) and of the input (Digest), never either, with its
// Work.
type Launch struct {
	Key, Target, Digest string
	ID, TargetID        string
}

// Admission is a start as the registry decides it: the Work's record (no
// input), the limits and retention of the admitting Engine, the budget
// for the pool, and the launch identity.
type Admission struct {
	Record         Record
	MaxOutstanding int
	MaxStarts      int
	Retain         int
	RetainAge      time.Duration `json:",omitempty"`
	// The child's own budget limits (Spec.Budget) and its budget with the
	// defaults and ceiling applied, for the owner's pool.
	Want, Eff [3]int64
	Function  bool
	// Launch is the SHA-256 of the launch's identity (Spec.CallID), hex,
	// or ""; Digest is the input's digest (Spec.InputDigest), hex.
	Launch, Digest string
	// Approval: the Work awaits its approval from its admission on.
	Approval bool `json:",omitempty"`
}

// Decision is what the registry says of an admission before it records
// anything: a repeat of an admission it applied (Again: the same Work id,
// a call tried again after its first answer was lost; nothing is
// admitted again, and the engine goes on as it would have after the
// first), a repeated launch (Replay, with the Work it started; no limit
// applies), a refusal (Refusal, with the limit's name or the pool's
// dimension that could not be covered), or, none, admitted.
type Decision struct {
	Again   *Record
	Replay  *Launch
	Refusal *work.Error
	Limit   string // observe.LimitOutstanding or observe.LimitStarts
	Budget  string // the pool's budget that could not cover the child's
}

// launchConflict is the ErrConflict of a launch identity reused with
// another target or input: work's own error of that message
// (contract.LaunchConflict), not a detail of ErrConflict.
var launchConflict, _ = DecodeError(work.ErrConflict.Code, contract.LaunchConflict)

// Decide decides a as work.Engine does, after the one check of its
// own (a Work id it holds is Again): a repeated launch identity
// with the same target and input replays, with another is an
// ErrConflict of its own (launchConflict); then the outstanding and
// starts limits, then the pool. It changes nothing.
func (g *Registry) Decide(a Admission) Decision {
	if i := g.Find(a.Record.ID); i >= 0 {
		r := g.Records[i]
		return Decision{Again: &r}
	}
	if a.Launch != "" {
		if i := slices.IndexFunc(g.Launches, func(l Launch) bool { return l.Key == a.Launch }); i >= 0 {
			l := g.Launches[i]
			if l.Target != a.Record.Label || l.Digest != a.Digest {
				return Decision{Refusal: launchConflict}
			}
			return Decision{Replay: &l}
		}
	}
	active := 0
	for _, r := range g.Records {
		if !r.State.Terminal() {
			active++
		}
	}
	if a.MaxOutstanding > 0 && active >= a.MaxOutstanding {
		return Decision{Refusal: Detail(work.ErrLimit, contract.LimitDetail(contract.LimitOutstanding, a.MaxOutstanding)), Limit: observe.LimitOutstanding}
	}
	if a.MaxStarts > 0 && g.Starts >= a.MaxStarts {
		return Decision{Refusal: Detail(work.ErrLimit, contract.LimitDetail(contract.LimitStarts, a.MaxStarts)), Limit: observe.LimitStarts}
	}
	if _, _, short := g.Pool.Reserve(a.Want, a.Eff, a.Function); short != "" {
		return Decision{Refusal: Detail(work.ErrBudgetExhausted, contract.PoolShort(short)), Budget: short}
	}
	return Decision{}
}

// Admit records a start Decide admitted: the Work queued at the next
// sequence number, its reservation held from the pool, its launch
// identity kept (the oldest dropped beyond 256), and
// a's retention bounds. It returns the budget dimensions the child runs
// with (the pool applied) and the Work's record.
func (g *Registry) Admit(a Admission) (run [3]int64, rec Record) {
	run, held, _ := g.Pool.Reserve(a.Want, a.Eff, a.Function)
	if g.Pool != nil {
		for i := range held {
			g.Pool.Held[i] += held[i]
		}
	}
	g.Starts++
	g.Seq++
	rec = a.Record
	rec.Seq, rec.State, rec.Held, rec.Run = g.Seq, work.StateQueued, held, run
	if a.Approval {
		rec.Approval, rec.Requested = true, rec.Created
	}
	g.Retain, g.RetainAge = a.Retain, a.RetainAge
	g.Records = append(g.Records, rec)
	if a.Launch != "" {
		if len(g.Launches) >= contract.MaxLaunches {
			g.Launches = slices.Delete(g.Launches, 0, len(g.Launches)-contract.MaxLaunches+1)
		}
		g.Launches = append(g.Launches, Launch{Key: a.Launch, Target: rec.Label, Digest: a.Digest, ID: rec.ID, TargetID: rec.TargetID})
	}
	return run, rec
}

// Transition applies a Work's transition record r over an older revision
// (a late or repeated one never moves the record back) and reports
// whether it applied. The first terminal record settles the Work's pool
// reservation (a later terminal one, for a later revision, does not
// again) and applies retention: a detached Work is dropped (its own
// state forgets itself as it ends), else the terminal Work beyond Retain
// goes in work.WithRetention's order (Evict), whose ids it returns.
func (g *Registry) Transition(r Record) (applied bool, evicted []string) {
	i := g.Find(r.ID)
	if i < 0 {
		return false, nil
	}
	rec := &g.Records[i]
	if r.Rev <= rec.Rev {
		return false, nil
	}
	settled := rec.State.Terminal()
	rec.Take(r)
	if settled || !rec.State.Terminal() {
		return true, nil
	}
	g.Pool.Settle(rec.Held, r.Spent)
	rec.Held = [3]int64{}
	if rec.Detached {
		g.Remove(i)
		return true, nil
	}
	for j := Evict(g.Records, g.Retain); j >= 0; j = Evict(g.Records, g.Retain) {
		evicted = append(evicted, g.Records[j].ID)
		g.Remove(j)
	}
	return true, evicted
}

// Expire drops the terminal records settled more than RetainAge before
// now (none when RetainAge is 0) and returns their ids.
func (g *Registry) Expire(now time.Time) (dropped []string) {
	if g.RetainAge <= 0 {
		return nil
	}
	g.Records = slices.DeleteFunc(g.Records, func(r Record) bool {
		if r.Expired(now, g.RetainAge) {
			dropped = append(dropped, r.ID)
			return true
		}
		return false
	})
	return dropped
}

// MarkRead marks id's result read and reports whether that changed it.
func (g *Registry) MarkRead(id string) bool {
	if i := g.Find(id); i >= 0 && !g.Records[i].Read {
		g.Records[i].Read = true
		return true
	}
	return false
}

// Detach hides id: a terminal Work is dropped (dropped true), a live one
// once it ends (Transition). found is whether the registry had it.
func (g *Registry) Detach(id string) (found, dropped bool) {
	i := g.Find(id)
	if i < 0 {
		return false, false
	}
	g.Records[i].Detached = true
	if g.Records[i].State.Terminal() {
		g.Remove(i)
		return true, true
	}
	return true, false
}

// Forget drops a start that failed after its admission: its record (its
// reservation refunded: it never ran) and its launch identity.
func (g *Registry) Forget(id string) {
	g.Launches = slices.DeleteFunc(g.Launches, func(l Launch) bool { return l.ID == id })
	if i := g.Find(id); i >= 0 {
		if !g.Records[i].State.Terminal() {
			g.Pool.Settle(g.Records[i].Held, &observe.Usage{})
		}
		g.Remove(i)
	}
}

// SetPool gives the registry a pool with limit (negative dimensions 0),
// keeping what it holds and used.
func (g *Registry) SetPool(limit [3]int64) {
	if g.Pool == nil {
		g.Pool = &Pool{}
	}
	for i, v := range limit {
		g.Pool.Limit[i] = max(v, 0)
	}
}

// Visible returns the records not detached (what the owner's reads see).
func (g *Registry) Visible() []Record {
	out := make([]Record, 0, len(g.Records))
	for _, r := range g.Records {
		if !r.Detached {
			out = append(out, r)
		}
	}
	return out
}

// Find returns the index of id's record, or -1.
func (g *Registry) Find(id string) int {
	return slices.IndexFunc(g.Records, func(r Record) bool { return r.ID == id })
}

// Remove drops the record at i.
func (g *Registry) Remove(i int) { g.Records = slices.Delete(g.Records, i, i+1) }
