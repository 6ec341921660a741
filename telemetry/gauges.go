package telemetry

import (
	"context"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/agentwork/agentwork/work"
)

// observe reports the gauges from a census of the watched engines
// (work.Watched).
func (in *instruments) observe(o metric.Observer, c census) {
	if !c.watched {
		return
	}
	for target, n := range c.counts {
		t := in.forTarget(target)
		for i := range n {
			o.ObserveInt64(in.items, int64(n[i]), t.state[i])
		}
		o.ObserveFloat64(in.oldestQueued, c.oldestQueued[target].Seconds(), t.target)
		o.ObserveFloat64(in.oldestCancel, c.oldestCancel[target].Seconds(), t.target)
	}
	o.ObserveInt64(in.limit, int64(c.limit))
	o.ObserveInt64(in.slots, int64(c.slots))
}

// census is what the gauges and the status page read from the watched
// engines at one moment: counts and ages only, never content.
type census struct {
	watched      bool
	counts       map[string]*[len(work.States)]int // registry counts (retained terminal Work included)
	limit        int                               // sum of the running limits
	slots        int                               // running + cancel-requested
	queued       int
	oldestQueued map[string]time.Duration // by target; absent when none is queued
	oldestCancel map[string]time.Duration // by target; absent when none is cancel-requested
	live         []liveWork
}

// liveWork is one live Work as the status page shows it.
type liveWork struct {
	work.LiveWork
	Elapsed       time.Duration // since created (queued) or started
	CancelWaiting time.Duration // since cancel was requested, for cancel-requested Work
}

// census reads the watched engines' Snapshots (work.Watched): the
// per-state counts, the live Work, slots and ages.
//
// It also forgets the cancel-request times of Work that no watched
// engine holds cancel-requested: a Work that a durable runner's
// worker reported cancel-requested may end in another process, whose
// terminal event this Observer never sees. Only times recorded before the
// snapshots are forgotten (a Supervisor reports a cancel request after
// its state changed, so such a Work shows in its snapshot if it is still
// cancel-requested), and none when any watched engine's Snapshot fails
// (the Work it holds is unknown that round).
func (o *Observer) census(ctx context.Context, sups []work.Watched) census {
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
	c := census{watched: len(sups) > 0, counts: map[string]*[len(work.States)]int{},
		oldestQueued: map[string]time.Duration{}, oldestCancel: map[string]time.Duration{}}
	for _, s := range sups {
		snap, err := s.Snapshot(ctx)
		if err != nil {
			// An engine that cannot answer now reports nothing, and its
			// cancel-requested Work is unknown: forget no request time
			// this round (its Work may still be cancel-requested).
			stale = nil
			continue
		}
		for _, tc := range snap.Counts {
			v := c.counts[tc.Target]
			if v == nil {
				v = new([len(work.States)]int)
				c.counts[tc.Target] = v
			}
			for i, n := range tc.Counts {
				if j := stateIndex(work.States[i]); j >= 0 {
					v[j] += n
				}
			}
		}
		c.limit += snap.MaxRunning
		c.slots += snap.SlotsInUse
		c.queued += snap.Queued
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
			if lw.State == work.StateCancelRequested {
				delete(stale, lw.ID)
				at, ok := o.cancelRequestedAt(lw.ID)
				if !ok {
					at = lw.Started
				}
				w.CancelWaiting = max(snap.Time.Sub(at), 0)
				c.oldestCancel[lw.Target] = max(c.oldestCancel[lw.Target], w.CancelWaiting)
			}
			if _, ok := c.counts[lw.Target]; !ok {
				c.counts[lw.Target] = new([len(work.States)]int)
			}
			c.live = append(c.live, w)
		}
	}
	return c
}

func (o *Observer) collect(ctx context.Context, ob metric.Observer) error {
	sups := o.watchedSupervisors()
	o.m.observe(ob, o.census(ctx, sups))
	return nil
}

// watchedSupervisors returns the engines the Observer reports on.
func (o *Observer) watchedSupervisors() []work.Watched {
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

// Watch adds s (any engine, through work.Watched) to those whose live
// counts the gauges report (agentwork_work_items and
// agentwork_work_concurrency_limit sum over them). work.New calls it; the returned function, which Supervisor.Close
// calls, removes s again. It is idempotent.
func (o *Observer) Watch(s work.Watched) (unwatch func()) {
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
