package work

import (
	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/observe"
)

type ownerState struct {
	id       string
	depth    int
	sc       *scope             // nil for a top-level owner
	items    itemTable          // visible Work, by id
	hidden   map[*item]struct{} // detached Work that is not yet terminal
	active   int                // queued + running, visible or not
	starts   int
	queue    itemList // queued Work, FIFO
	terminal itemList // visible terminal Work, oldest finished first
	// classes counts the terminal list's Works per eviction class, so
	// that eviction finds the class to evict from without a scan.
	classes [contract.NumEvictRanks]int
	// rprev and rnext link the owner into the ready ring while inRing.
	rprev, rnext *ownerState
	inRing       bool
	launches     launchRecords
	// countsLabel is the target label of the owner's last Start and
	// counts its census entry (s.counts[countsLabel]).
	countsLabel string
	counts      *[len(observe.States)]int
}

// scope is a child's own owner scope (Execution.Scope): the Owner of the
// scope carries it (Owner.sc; scopeOf). Its fields are guarded by the
// engine's lock.
type scope struct {
	ended  bool        // the child has returned: the scope admits no more Work
	work   *item       // the background Work whose scope this is; nil for a foreground call's
	parent *scope      // the scope the Work or call was started in; nil under a top-level owner
	os     *ownerState // the scope's registry entry while it has one
	acct   *account    // the child's budget reservation: its children reserve from it
}

func (*scope) isScope() {}

// scopeOf returns the scope of o, a child's scope, made by s; nil for a
// top-level owner.
func scopeOf(o Owner) *scope {
	sc, _ := o.sc.(*scope)
	return sc
}

// holder returns the background Work whose running slot the code of scope
// sc runs on: the Work itself for a background child's scope, the nearest
// enclosing one for a foreground call's scope, nil when no Work encloses it
// (a foreground call made by a top-level owner).
func (sc *scope) holder() *item {
	for ; sc != nil; sc = sc.parent {
		if sc.work != nil {
			return sc.work
		}
	}
	return nil
}
