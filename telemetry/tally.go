package telemetry

import (
	"github.com/agentwork/agentwork/work/observe"
)

// workTally is what the Observer counts of one Work while it lives, for
// the summaries its span and terminal log line get: a job's polls by
// outcome and a Work's updates.
type workTally struct {
	polls   pollCounts
	updates updateCounts
}

// tally applies f to the Work's tally, creating it.
func (o *Observer) tally(id string, f func(*workTally)) {
	if id == "" {
		return
	}
	o.tallyMu.Lock()
	if o.tallies == nil {
		o.tallies = make(map[string]workTally)
	}
	t := o.tallies[id]
	f(&t)
	o.tallies[id] = t
	o.tallyN.Store(int64(len(o.tallies)))
	o.tallyMu.Unlock()
}

// tallyOf returns the Work's tally so far.
func (o *Observer) tallyOf(id string) (workTally, bool) {
	if o.tallyN.Load() == 0 { // nothing polled or updated: the common case takes no lock
		return workTally{}, false
	}
	o.tallyMu.Lock()
	defer o.tallyMu.Unlock()
	t, ok := o.tallies[id]
	return t, ok
}

// forgetTally drops the tally of a Work that ended (its terminal event)
// or was orphaned.
func (o *Observer) forgetTally(e observe.Event) {
	if e.WorkID == "" || o.tallyN.Load() == 0 || (e.Type != observe.EventOrphaned && !(e.To.Terminal() && e.Type == observe.EventType(e.To))) {
		return
	}
	o.tallyMu.Lock()
	delete(o.tallies, e.WorkID)
	o.tallyN.Store(int64(len(o.tallies)))
	o.tallyMu.Unlock()
}

// tallyIDs returns the ids whose tallies the Observer holds, for a census
// to forget those of Work no watched engine holds any more (a durable
// runner's Work may end in another process).
func (o *Observer) tallyIDs() map[string]struct{} {
	if o.tallyN.Load() == 0 {
		return nil
	}
	o.tallyMu.Lock()
	defer o.tallyMu.Unlock()
	if len(o.tallies) == 0 {
		return nil
	}
	ids := make(map[string]struct{}, len(o.tallies))
	for id := range o.tallies {
		ids[id] = struct{}{}
	}
	return ids
}

// forgetStaleTallies drops the tallies of the ids in stale that no
// watched engine reported live in c, unless some engine's Snapshot failed
// (its Work is unknown that round).
func (o *Observer) forgetStaleTallies(stale map[string]struct{}, c *census) {
	if len(stale) == 0 || c.partial {
		return
	}
	for _, lw := range c.live {
		delete(stale, lw.ID)
	}
	o.tallyMu.Lock()
	for id := range stale {
		delete(o.tallies, id)
	}
	o.tallyN.Store(int64(len(o.tallies)))
	o.tallyMu.Unlock()
}
