package driver

import (
	"slices"
	"sort"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/observe"
)

// Record is what an owner's registry keeps of one Work: no input, output,
// guidance or failure text. Both engines store it as JSON (Temporal's
// payloads, Restate's state), so its field names are wire format.
type Record struct {
	ID       string
	Label    string
	TargetID string
	Kind     observe.Kind
	State    observe.State
	// Seq is the Work's admission order in its registry.
	Seq int64
	// Rev orders a Work's transition records (the Work's workflow or
	// control object numbers them): the registry applies a record only
	// over an older revision, so one that arrives late or again never
	// moves the record back.
	Rev       int64
	Attempt   int
	Created   time.Time
	Started   time.Time `json:",omitzero"`
	Finished  time.Time `json:",omitzero"`
	HasResult bool      `json:",omitempty"`
	Read      bool      `json:",omitempty"`
	Detached  bool      `json:",omitempty"`
	Budget    string    `json:",omitempty"` // the budget that ran out, if one did
	// Class is why a terminal Work did not complete (work.Status.Class):
	// its failure class, or work.ClassCancelled.
	Class string `json:",omitempty"`
	// Progress is the Work's last progress counts its registry was told.
	Progress observe.Progress
	// Held is what the Work reserved from its owner's pool, and Run the
	// budget dimensions its child runs with (as Registry.Admit returned
	// them: a repeated admission answers with them again).
	Held [3]int64
	Run  [3]int64 `json:",omitzero"`
	// Spent is what a terminal Work spent, in its transition record; nil
	// when unknown (its attempt died with its process) or not terminal.
	Spent *observe.Usage `json:",omitempty"`
	// Waiting: an external job between its submit and its result.
	Waiting bool `json:",omitempty"`
	// Approval: a queued Work awaiting its approval, requested at
	// Requested (zero: at Created).
	Approval  bool      `json:",omitempty"`
	Requested time.Time `json:",omitzero"`
	// Updates is how many updates the Work accepted (the Subscriptions'
	// update notices).
	Updates int `json:",omitempty"`
}

// Take applies what a later transition record x says of the Work's
// state, keeping what only the registry knows (identity, admission,
// reservation, read and detach).
func (r *Record) Take(x Record) {
	r.Rev, r.State, r.Attempt, r.Started, r.Finished, r.HasResult = x.Rev, x.State, x.Attempt, x.Started, x.Finished, x.HasResult
	r.Budget, r.Progress, r.Class = x.Budget, x.Progress, x.Class
	r.Waiting, r.Approval, r.Updates = x.Waiting, x.Approval, x.Updates
}

// Status is r's projection, as the in-process engine's: a cancelled Work
// with no class has work.ClassCancelled.
func (r Record) Status() work.Status {
	class := r.Class
	if r.State == work.StateCancelled && class == "" {
		class = work.ClassCancelled
	}
	return work.Status{Work: work.Ref{ID: r.ID, TargetID: r.TargetID, Durable: true}, TargetLabel: r.Label,
		State: r.State, Attempt: max(r.Attempt, 1), CreatedAt: r.Created, StartedAt: r.Started,
		FinishedAt: r.Finished, ResultAvailable: r.HasResult, ResultRead: r.Read, BudgetExhausted: r.Budget,
		Progress: r.Progress, Class: class, AwaitingApproval: r.Approval && r.State == work.StateQueued,
		Waiting: r.Waiting && !r.State.Terminal()}
}

// order is what the contract's orders (contract.Order) read of r.
func (r Record) order() contract.Order {
	return contract.Order{State: r.State, Seq: uint64(r.Seq), ResultAvailable: r.HasResult, ResultRead: r.Read}
}

// Expired reports whether r is terminal and settled more than age before
// now (age 0: never).
func (r Record) Expired(now time.Time, age time.Duration) bool {
	return age > 0 && r.State.Terminal() && now.Sub(r.Finished) > age
}

// Current returns recs without the records past the age bound at now
// (age 0: recs as they are), what a reader shows between the registry's
// own evictions. It reuses recs' array.
func Current(recs []Record, now time.Time, age time.Duration) []Record {
	if age <= 0 {
		return recs
	}
	return slices.DeleteFunc(recs, func(r Record) bool { return r.Expired(now, age) })
}

// RequestedAt is when r's approval was requested.
func (r Record) RequestedAt() time.Time {
	if r.Requested.IsZero() {
		return r.Created
	}
	return r.Requested
}

// Find returns the record of id among recs, or work.ErrNotFound.
func Find(recs []Record, id string) (Record, error) {
	if i := slices.IndexFunc(recs, func(r Record) bool { return r.ID == id }); i >= 0 {
		return recs[i], nil
	}
	return Record{}, work.ErrNotFound
}

// List returns at most 50 of recs' projections in the
// contract's order (contract.Order.ListsBefore). It sorts recs.
func List(recs []Record) []work.Status {
	sort.Slice(recs, func(i, j int) bool { return recs[i].order().ListsBefore(recs[j].order()) })
	recs = recs[:min(len(recs), contract.MaxListed)]
	out := make([]work.Status, len(recs))
	for i, r := range recs {
		out[i] = r.Status()
	}
	return out
}

// Settled returns the projections of recs' terminal Work, oldest
// settlement first.
func Settled(recs []Record) []work.Status {
	var term []Record
	for _, r := range recs {
		if r.State.Terminal() {
			term = append(term, r)
		}
	}
	sort.SliceStable(term, func(i, j int) bool { return term[i].Finished.Before(term[j].Finished) })
	out := make([]work.Status, len(term))
	for i, r := range term {
		out[i] = r.Status()
	}
	return out
}

// Live reports whether any of recs is not terminal.
func Live(recs []Record) bool {
	return slices.ContainsFunc(recs, func(r Record) bool { return !r.State.Terminal() })
}

// Rows returns the status-block rows of recs (contract.Order.RowsBefore, at
// most 12, elapsed times at now) and how many were left out. It
// sorts recs.
func Rows(recs []Record, now time.Time) ([]observe.Row, int) {
	if len(recs) == 0 {
		return nil, 0
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].order().RowsBefore(recs[j].order()) })
	n := min(len(recs), contract.MaxRows)
	rows := make([]observe.Row, n)
	for i, r := range recs[:n] {
		rows[i] = observe.Row{ID: r.ID, TargetLabel: r.Label, State: r.State,
			Elapsed: contract.Elapsed(r.Created, r.Started, r.Finished, now), ResultAvailable: r.HasResult}
	}
	return rows, len(recs) - n
}

// AwaitingApproval returns the ids of recs' Work that is queued awaiting
// its approval, in recs' order.
func AwaitingApproval(recs []Record) []string {
	var ids []string
	for _, r := range recs {
		if r.Approval && r.State == work.StateQueued {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// Evict returns the index in recs of the record the count bound n evicts
// next, or -1 when recs hold at most n terminal Works that are not
// detached (n <= 0: no bound). The order is work.WithRetention's
// (contract.EvictionRank: results read first, then failed and cancelled
// Work, then unread results; the oldest settled first within each). It is
// deterministic (a Temporal workflow applies it) and changes nothing.
func Evict(recs []Record, n int) int {
	if n <= 0 {
		return -1
	}
	pick, terminal := -1, 0
	for i, r := range recs {
		if !r.State.Terminal() || r.Detached {
			continue
		}
		terminal++
		if pick < 0 {
			pick = i
			continue
		}
		p := recs[pick]
		c, pc := contract.EvictionRank(r.State, r.Read), contract.EvictionRank(p.State, p.Read)
		if c < pc || c == pc && r.Finished.Before(p.Finished) {
			pick = i
		}
	}
	if terminal <= n {
		return -1
	}
	return pick
}
