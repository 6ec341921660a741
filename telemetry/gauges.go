package telemetry

import (
	"context"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// observe reports the gauges from a census of the watched engines
// (observe.Watched).
func (in *instruments) observe(o metric.Observer, c census) {
	if !c.watched {
		return
	}
	available := int64(1)
	if c.unanswered > 0 {
		available = 0
	}
	o.ObserveInt64(in.available, available)
	for target, n := range c.counts {
		t := in.forTarget(target)
		for i := range n {
			o.ObserveInt64(in.items, int64(n[i]), t.state[i])
		}
		o.ObserveFloat64(in.oldestQueued, c.oldestQueued[target].Seconds(), t.target)
		o.ObserveFloat64(in.oldestCancel, c.oldestCancel[target].Seconds(), t.target)
		if c.local[target] {
			o.ObserveInt64(in.slots, int64(c.slots[target]), t.target)
		}
		if p, ok := c.pollers[target]; ok {
			o.ObserveInt64(in.pollers, int64(p), t.target)
		}
	}
	for target, n := range c.limits {
		o.ObserveInt64(in.limit, int64(n), in.forTarget(target).target)
	}
}

// census is what the gauges and the status page read from the watched
// engines at one moment: counts and ages only, never content.
type census struct {
	watched bool
	counts  map[string]*[len(observe.States)]int // registry counts (retained terminal Work included)
	// limits are the running limits by target: a limit every target of an
	// engine shares (an in-process engine's) under SharedLimit, a
	// per-target one (a Temporal Worker's) under its target; summed over
	// engines.
	limits map[string]int
	slots  map[string]int  // running + cancel-requested, by target
	local  map[string]bool // targets some process-local engine reports (slots are exported for them)
	// pollers is, by target, how many workers poll its queue (from a
	// deployment snapshot only).
	pollers      map[string]int
	queued       int
	oldestQueued map[string]time.Duration // by target; absent when none is queued
	oldestCancel map[string]time.Duration // by target; absent when none is cancel-requested
	live         []liveWork
	waits        waitCensus // waiting jobs and Work awaiting approval
	partial      bool       // some watched engine's Snapshot failed
	engines      int        // the watched engines
	unanswered   int        // the watched engines whose Snapshot failed (or took longer than the Observer's bound)
	omitted      int        // live Works a deployment snapshot left out
}

// SharedLimit is the target label of agentwork_work_concurrency_limit
// for a running limit that all of an engine's targets share (an
// in-process engine's WithMaxRunning): the slots of every target of
// that process count against it. A per-target limit (a Temporal
// Worker's) carries its target's label instead.
const SharedLimit = "*"

// slotsTotal is the running slots in use over every target.
func (c census) slotsTotal() int {
	n := 0
	for _, v := range c.slots {
		n += v
	}
	return n
}

// limitTotal is the sum of the running limits.
func (c census) limitTotal() int {
	n := 0
	for _, v := range c.limits {
		n += v
	}
	return n
}

// liveWork is one live Work as the status page shows it.
type liveWork struct {
	observe.LiveWork
	Elapsed       time.Duration // since created (queued) or started
	CancelWaiting time.Duration // since cancel was requested, for cancel-requested Work
}

// census reads the watched engines' Snapshots (observe.Watched): the
// per-state counts, the live Work, slots and ages.
//
// It also forgets the cancel-request times of Work that no watched engine
// holds cancel-requested: a Work that a durable runner's worker reported
// cancel-requested may end in another process, whose terminal event this
// Observer never sees. Only times recorded before the snapshots are
// forgotten (an in-process engine reports a cancel request after its state
// changed, so such a Work shows in its snapshot if it is still
// cancel-requested), and none when any watched engine's Snapshot fails (the
// Work it holds is unknown that round).
func (o *Observer) census(ctx context.Context, sups []observe.Watched) census {
	o.cancelMu.Lock()
	var stale map[string]struct{}
	if len(o.cancelAt) > 0 {
		stale = make(map[string]struct{}, len(o.cancelAt))
		for id := range o.cancelAt {
			stale[id] = struct{}{}
		}
	}
	o.cancelMu.Unlock()
	defer func() {
		if len(stale) == 0 {
			return
		}
		o.cancelMu.Lock()
		for id := range stale {
			delete(o.cancelAt, id)
		}
		o.cancelMu.Unlock()
	}()
	c := census{watched: len(sups) > 0, counts: map[string]*[len(observe.States)]int{},
		limits: map[string]int{}, slots: map[string]int{}, local: map[string]bool{}, pollers: map[string]int{},
		oldestQueued: map[string]time.Duration{}, oldestCancel: map[string]time.Duration{}}
	defer o.forgetStaleTallies(o.tallyIDs(), &c)
	c.engines = len(sups)
	var snaps []observe.Snapshot
	defer func() {
		o.lastMu.Lock()
		o.lastAt, o.lastSnaps = time.Now(), snaps
		o.lastMu.Unlock()
	}()
	for _, s := range sups {
		snap, err := o.snapshot(ctx, s)
		if err == nil {
			snaps = append(snaps, snap)
		}
		if err != nil {
			c.unanswered++
			// An engine that cannot answer now reports nothing, and its
			// cancel-requested Work is unknown: forget no request time
			// this round (its Work may still be cancel-requested).
			stale = nil
			c.partial = true
			continue
		}
		for _, tc := range snap.Counts {
			v := c.counts[tc.Target]
			if v == nil {
				v = new([len(observe.States)]int)
				c.counts[tc.Target] = v
			}
			for i, n := range tc.Counts {
				v[i] += n
			}
			c.waits.add(snap.Time, tc)
			if snap.Deployment {
				c.pollers[tc.Target] += tc.Pollers
			} else {
				c.local[tc.Target] = true
				c.slots[tc.Target] += tc.SlotsInUse
			}
			if tc.MaxRunning > 0 {
				c.limits[tc.Target] += tc.MaxRunning
			}
			c.oldestQueued[tc.Target] = max(c.oldestQueued[tc.Target], tc.OldestQueued)
		}
		if snap.MaxRunning > 0 {
			c.limits[SharedLimit] += snap.MaxRunning
		}
		c.queued += snap.Queued
		c.omitted += snap.LiveOmitted
		for _, lw := range snap.Live {
			w := liveWork{LiveWork: lw, Elapsed: snap.Time.Sub(lw.Created)}
			switch lw.State {
			case work.StateQueued:
				// A Work awaiting approval is not in the dispatch queue;
				// an approved one has waited in it since its approval.
				if !lw.AwaitingApproval {
					since := lw.Enqueued
					if since.IsZero() {
						since = lw.Created
					}
					c.oldestQueued[lw.Target] = max(c.oldestQueued[lw.Target], snap.Time.Sub(since))
				}
			case work.StateRunning, work.StateCancelRequested:
				w.Elapsed = snap.Time.Sub(lw.Started)
			}
			// A deployment snapshot's cancel-requested Work is also
			// reported, with its age, by the worker that runs it.
			if lw.State == work.StateCancelRequested && !snap.Deployment {
				delete(stale, lw.ID)
				at, ok := lw.CancelAt, !lw.CancelAt.IsZero()
				if !ok {
					at, ok = o.cancelRequestedAt(lw.ID)
				}
				if !ok {
					at = lw.Started
				}
				w.CancelWaiting = max(snap.Time.Sub(at), 0)
				c.oldestCancel[lw.Target] = max(c.oldestCancel[lw.Target], w.CancelWaiting)
			}
			if _, ok := c.counts[lw.Target]; !ok {
				c.counts[lw.Target] = new([len(observe.States)]int)
			}
			c.live = append(c.live, w)
		}
	}
	return c
}

// answered returns the Snapshots of the watched engines that answer: the
// last census's when it is less than a second old (the same collection's
// gauges callback read them), else read now.
func (o *Observer) answered(ctx context.Context) []observe.Snapshot {
	o.lastMu.Lock()
	at, snaps := o.lastAt, o.lastSnaps
	o.lastMu.Unlock()
	if !at.IsZero() && time.Since(at) < time.Second {
		return snaps
	}
	var out []observe.Snapshot
	for _, s := range o.watchedEngines() {
		if snap, err := o.snapshot(ctx, s); err == nil {
			out = append(out, snap)
		}
	}
	return out
}

// snapshot is s's Snapshot within the Observer's bound (WithSnapshotTimeout).
func (o *Observer) snapshot(ctx context.Context, s observe.Watched) (observe.Snapshot, error) {
	d := o.snapTimeout
	if d <= 0 {
		d = DefaultSnapshotTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return s.Snapshot(ctx)
}

func (o *Observer) collect(ctx context.Context, ob metric.Observer) error {
	sups := o.watchedEngines()
	c := o.census(ctx, sups)
	o.m.observe(ob, c)
	o.w.observe(ob, c)
	return nil
}

// watchedEngines returns the engines the Observer reports on.
func (o *Observer) watchedEngines() []observe.Watched {
	o.watchMu.Lock()
	defer o.watchMu.Unlock()
	return slices.Clone(o.watched)
}

// cancelRequestedAt returns when the Work id was asked to cancel, if the
// Observer saw it.
func (o *Observer) cancelRequestedAt(id string) (time.Time, bool) {
	o.cancelMu.Lock()
	defer o.cancelMu.Unlock()
	t, ok := o.cancelAt[id]
	return t, ok
}

// Watch adds s (any engine, through observe.Watched) to those whose live
// counts the gauges report (agentwork_work_items and
// agentwork_work_concurrency_limit sum over them). work.New calls it; the
// returned function, which Engine.Close calls, removes s again. It is
// idempotent.
func (o *Observer) Watch(s observe.Watched) (unwatch func()) {
	if o == nil {
		o = new(Observer) // a nil Observer is the zero one
	}
	o.watchMu.Lock()
	o.watched = append(o.watched, s)
	o.watchMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			o.watchMu.Lock()
			defer o.watchMu.Unlock()
			if i := slices.Index(o.watched, s); i >= 0 {
				o.watched = slices.Delete(o.watched, i, i+1)
			}
		})
	}
}
