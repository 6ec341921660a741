package work

import (
	"time"

	"github.com/agentwork/agentwork/work/observe"
)

// transition is the only place a Work's state changes. It refuses any edge
// canTransition does not allow (and returns nil), keeps the census and
// records the event at time t, which it returns for the caller to complete
// (before anything else is added to e).
func (s *Engine) transition(it *item, to observe.State, e *emission, t time.Time) *observe.Event {
	ti := to.Index()
	if ti < 0 || !stateEdges[it.st][ti] {
		return nil
	}
	terminal := stateTerminal[ti]
	if terminal && it.mb != nil && len(it.mb.queued) > 0 {
		// Undelivered guidance is dropped before the terminal event, while
		// the execution is still open for observers.
		n := len(it.mb.queued)
		it.mb.queued, it.mb.bytes = nil, 0
		e.push(it, observe.EventGuidanceDropped, t).Count = n
	}
	c := it.counts
	c[it.st]--
	c[ti]++
	from := it.state()
	it.st = stateIdx(ti)
	if terminal {
		s.settledLocked(it, t, e)
	}
	ev := e.push(it, observe.EventType(to), t)
	ev.From, ev.To = from, to
	if terminal {
		ev.ErrorClass = it.class.String() // set by the caller as it settles: Status.Class is the same value
	}
	return ev
}
