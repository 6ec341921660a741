package telemetry

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/agentwork/agentwork/work"
)

// instruments are the Observer's metric instruments.
type instruments struct {
	items        metric.Int64ObservableGauge
	limit        metric.Int64ObservableGauge
	slots        metric.Int64ObservableGauge
	oldestQueued metric.Float64ObservableGauge
	oldestCancel metric.Float64ObservableGauge
	transitions  metric.Int64Counter
	duration     metric.Float64Histogram
	queueWait    metric.Float64Histogram
	actions      metric.Int64Counter
	guidance     metric.Int64Counter
	statusRows   metric.Int64Histogram
	resultBytes  metric.Int64Histogram
	refused      metric.Int64Counter
	orphaned     metric.Int64Counter

	// Precomputed attribute sets for the bounded label sets.
	actionOpts   [len(actions) + 1][len(outcomes)]metric.MeasurementOption
	actionAdd    [len(actions) + 1][len(outcomes)][]metric.AddOption
	guidanceOpts [3]metric.MeasurementOption // accepted, delivered, dropped
	targets      sync.Map                    // target label -> *targetOpts
}

// targetOpts are the attribute sets of one target label, also as the
// option slices the hot path passes (a variadic call through an interface
// would allocate its slice on every record).
type targetOpts struct {
	state   [len(work.States)]metric.MeasurementOption // {state, target}
	outcome [len(work.States)]metric.MeasurementOption // {outcome, target}, terminal states only
	target  metric.MeasurementOption                   // {target}

	stateAdd   [len(work.States)][]metric.AddOption
	outcomeRec [len(work.States)][]metric.RecordOption
	targetRec  []metric.RecordOption
}

func newInstruments(m metric.Meter) (*instruments, error) {
	var (
		in  instruments
		err error
		e   error
	)
	in.items, e = m.Int64ObservableGauge(metricItems, metric.WithUnit("{work}"),
		metric.WithDescription("Work items in the registry by state and target, read from the supervisor at collection."))
	err = errors.Join(err, e)
	in.limit, e = m.Int64ObservableGauge(metricLimit, metric.WithUnit("{work}"),
		metric.WithDescription("How many work items may run at once: the sum of the watched supervisors' running limits."))
	err = errors.Join(err, e)
	in.slots, e = m.Int64ObservableGauge(metricSlots, metric.WithUnit("{work}"),
		metric.WithDescription("Running slots in use: running plus cancel-requested work (a cancel-requested item keeps its slot until its child returns), summed over the watched supervisors."))
	err = errors.Join(err, e)
	in.oldestQueued, e = m.Float64ObservableGauge(metricOldestQueue, metric.WithUnit("s"),
		metric.WithDescription("Age of the oldest queued work item by target (0 when none is queued), read from the supervisor at collection."))
	err = errors.Join(err, e)
	in.oldestCancel, e = m.Float64ObservableGauge(metricOldestCR, metric.WithUnit("s"),
		metric.WithDescription("How long the oldest cancel-requested work item by target has been waiting for its child to stop (0 when none)."))
	err = errors.Join(err, e)
	in.transitions, e = m.Int64Counter(metricTransitions, metric.WithUnit("{transition}"),
		metric.WithDescription("Lifecycle transitions of work items, by the state entered and target."))
	err = errors.Join(err, e)
	in.duration, e = m.Float64Histogram(metricDuration, metric.WithUnit("s"),
		metric.WithDescription("How long work ran, from running (or queued, if cancelled before it ran) to its terminal state, by target and outcome."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	err = errors.Join(err, e)
	in.queueWait, e = m.Float64Histogram(metricQueueWait, metric.WithUnit("s"),
		metric.WithDescription("How long work waited queued before it started running, by target."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	err = errors.Join(err, e)
	in.actions, e = m.Int64Counter(metricActions, metric.WithUnit("{call}"),
		metric.WithDescription("Calls of the work tool, by action and outcome."))
	err = errors.Join(err, e)
	in.guidance, e = m.Int64Counter(metricGuidance, metric.WithUnit("{message}"),
		metric.WithDescription("Guidance messages accepted, delivered to the child or dropped unread."))
	err = errors.Join(err, e)
	in.statusRows, e = m.Int64Histogram(metricStatusRows, metric.WithUnit("{row}"),
		metric.WithDescription("Rows in each rendered boundary status block."),
		metric.WithExplicitBucketBoundaries(rowsBuckets...))
	err = errors.Join(err, e)
	in.resultBytes, e = m.Int64Histogram(metricResultBytes, metric.WithUnit("By"),
		metric.WithDescription("Size of completed work results in bytes, by target (sizes only, never content)."),
		metric.WithExplicitBucketBoundaries(bytesBuckets...))
	err = errors.Join(err, e)
	in.refused, e = m.Int64Counter(metricRefused, metric.WithUnit("{start}"),
		metric.WithDescription("Starts refused before any work was queued, by target and reason (closed or the limit reached)."))
	err = errors.Join(err, e)
	in.orphaned, e = m.Int64Counter(metricOrphaned, metric.WithUnit("{work}"),
		metric.WithDescription("Work abandoned by a supervisor's Shutdown because its child had not returned a grace period after cancellation, by target."))
	err = errors.Join(err, e)
	if err != nil {
		return nil, err
	}
	for i, a := range actions {
		for j, oc := range outcomes {
			in.actionOpts[i][j] = metric.WithAttributeSet(attribute.NewSet(labelAction.String(a), labelOutcome.String(oc)))
		}
	}
	for j, oc := range outcomes {
		in.actionOpts[len(actions)][j] = metric.WithAttributeSet(attribute.NewSet(labelAction.String(actionInvalid), labelOutcome.String(oc)))
	}
	for i := range in.actionOpts {
		for j := range in.actionOpts[i] {
			in.actionAdd[i][j] = []metric.AddOption{in.actionOpts[i][j]}
		}
	}
	for i, ev := range [...]string{"accepted", "delivered", "dropped"} {
		in.guidanceOpts[i] = metric.WithAttributeSet(attribute.NewSet(labelEvent.String(ev)))
	}
	return &in, nil
}

// forTarget returns the attribute sets of target, creating them once.
func (in *instruments) forTarget(target string) *targetOpts {
	if v, ok := in.targets.Load(target); ok {
		return v.(*targetOpts)
	}
	t := &targetOpts{target: metric.WithAttributeSet(attribute.NewSet(labelTarget.String(target)))}
	t.targetRec = []metric.RecordOption{t.target}
	for i, s := range work.States {
		t.state[i] = metric.WithAttributeSet(attribute.NewSet(labelState.String(string(s)), labelTarget.String(target)))
		t.stateAdd[i] = []metric.AddOption{t.state[i]}
		if s.Terminal() {
			t.outcome[i] = metric.WithAttributeSet(attribute.NewSet(labelOutcome.String(string(s)), labelTarget.String(target)))
			t.outcomeRec[i] = []metric.RecordOption{t.outcome[i]}
		}
	}
	v, _ := in.targets.LoadOrStore(target, t)
	return v.(*targetOpts)
}

func (in *instruments) action(action, outcome string) []metric.AddOption {
	i := len(actions)
	for k, a := range actions {
		if a == action {
			i = k
			break
		}
	}
	j := len(outcomes) - 1 // failed
	for k, oc := range outcomes {
		if oc == outcome {
			j = k
			break
		}
	}
	return in.actionAdd[i][j]
}

// record updates the metrics for one lifecycle event.
func (in *instruments) record(ctx context.Context, e work.Event) {
	switch e.Type {
	case work.EventRefused:
		in.refused.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(
			labelTarget.String(e.Target), labelReason.String(reasonOf(e.ErrorClass)))))
		return
	case work.EventStatusBlock:
		in.statusRows.Record(ctx, int64(e.Count))
		return
	case work.EventGuidanceAccepted:
		in.guidance.Add(ctx, int64(e.Count), in.guidanceOpts[0])
		return
	case work.EventGuidanceDelivered:
		in.guidance.Add(ctx, int64(e.Count), in.guidanceOpts[1])
		return
	case work.EventGuidanceDropped:
		in.guidance.Add(ctx, int64(e.Count), in.guidanceOpts[2])
		return
	case work.EventOrphaned:
		in.orphaned.Add(ctx, 1, in.forTarget(e.Target).target)
		return
	}
	i := stateIndex(e.To)
	if i < 0 || e.Type != work.EventType(e.To) {
		return // not a transition
	}
	t := in.forTarget(e.Target)
	in.transitions.Add(ctx, 1, t.stateAdd[i]...)
	switch e.To {
	case work.StateRunning:
		in.queueWait.Record(ctx, e.QueueWait.Seconds(), t.targetRec...)
	case work.StateCompleted:
		in.resultBytes.Record(ctx, int64(e.Bytes), t.targetRec...)
		in.duration.Record(ctx, e.Duration.Seconds(), t.outcomeRec[i]...)
	case work.StateFailed, work.StateCancelled:
		in.duration.Record(ctx, e.Duration.Seconds(), t.outcomeRec[i]...)
	}
}

// reasonOf is the refusal reason label: the engine's reason when it looks
// like a class, else "_OTHER".
func reasonOf(class string) string {
	if r := errorType(class); r != "" {
		return r
	}
	return otherErrorType
}

// observe reports the gauges from a census of the watched supervisors.
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
// supervisors at one moment: counts and ages only, never content.
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

// census reads the watched supervisors: Census for the per-state counts
// and Snapshot for the live Work, slots and ages.
//
// It also forgets the cancel-request times of Work that no watched
// Supervisor holds cancel-requested: a Work that a durable runner's
// worker reported cancel-requested may end in another process, whose
// terminal event this Observer never sees. Only times recorded before the
// snapshots are forgotten (a Supervisor reports a cancel request after
// its state changed, so such a Work shows in its snapshot if it is still
// cancel-requested).
func (o *Observer) census(sups []*work.Supervisor) census {
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
		s.Census(func(target string, st work.State, n int) {
			i := stateIndex(st)
			if i < 0 {
				return
			}
			v := c.counts[target]
			if v == nil {
				v = new([len(work.States)]int)
				c.counts[target] = v
			}
			v[i] += n
		})
		snap := s.Snapshot()
		c.limit += snap.MaxRunning
		c.slots += snap.SlotsInUse
		c.queued += snap.Queued
		for _, lw := range snap.Live {
			w := liveWork{LiveWork: lw, Elapsed: snap.Time.Sub(lw.Created)}
			switch lw.State {
			case work.StateQueued:
				c.oldestQueued[lw.Target] = max(c.oldestQueued[lw.Target], w.Elapsed)
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
