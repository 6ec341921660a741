package telemetry

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// instruments are the Observer's metric instruments.
type instruments struct {
	items        metric.Int64ObservableGauge
	limit        metric.Int64ObservableGauge
	slots        metric.Int64ObservableGauge
	oldestQueued metric.Float64ObservableGauge
	oldestCancel metric.Float64ObservableGauge
	pollers      metric.Int64ObservableGauge
	available    metric.Int64ObservableGauge
	transitions  metric.Int64Counter
	duration     metric.Float64Histogram
	queueWait    metric.Float64Histogram
	actions      metric.Int64Counter
	guidance     metric.Int64Counter
	statusRows   metric.Int64Histogram
	resultBytes  metric.Int64Histogram
	refused      metric.Int64Counter
	orphaned     metric.Int64Counter
	backgrounded metric.Int64Counter

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
	state   [len(observe.States)]metric.MeasurementOption // {state, target}
	outcome [len(observe.States)]metric.MeasurementOption // {outcome, target}, terminal states only
	target  metric.MeasurementOption                      // {target}

	stateAdd   [len(observe.States)][]metric.AddOption
	outcomeRec [len(observe.States)][]metric.RecordOption
	targetRec  []metric.RecordOption
}

func newInstruments(m metric.Meter) (*instruments, error) {
	var (
		in  instruments
		err error
		e   error
	)
	in.items, e = m.Int64ObservableGauge(metricItems, metric.WithUnit("{work}"),
		metric.WithDescription("Work items in the registry by state and target, read from the engine at collection."))
	err = errors.Join(err, e)
	in.limit, e = m.Int64ObservableGauge(metricLimit, metric.WithUnit("{work}"),
		metric.WithDescription("How many work items may run at once, by target: a limit all of a process's targets share (an in-process engine's) has target \"*\", a per-target limit (a Temporal worker's) its target."))
	err = errors.Join(err, e)
	in.slots, e = m.Int64ObservableGauge(metricSlots, metric.WithUnit("{work}"),
		metric.WithDescription("Running slots in use in this process by target: running plus cancel-requested work (a cancel-requested item keeps its slot until its child returns), except external jobs waiting between polls (they hold no slot)."))
	err = errors.Join(err, e)
	in.oldestQueued, e = m.Float64ObservableGauge(metricOldestQueue, metric.WithUnit("s"),
		metric.WithDescription("Age of the oldest queued work item by target (0 when none is queued), read from the engine at collection."))
	err = errors.Join(err, e)
	in.oldestCancel, e = m.Float64ObservableGauge(metricOldestCR, metric.WithUnit("s"),
		metric.WithDescription("How long the oldest cancel-requested work item by target has been waiting for its child to stop (0 when none)."))
	err = errors.Join(err, e)
	in.pollers, e = m.Int64ObservableGauge(metricPollers, metric.WithUnit("{poller}"),
		metric.WithDescription("Workers polling the target's task queue (a durable runner's deployment gauge; 0: no worker runs the target)."))
	err = errors.Join(err, e)
	in.available, e = m.Int64ObservableGauge(metricAvailable, metric.WithUnit("{engine}"),
		metric.WithDescription("1 when every engine this process watches answered its snapshot at this collection, 0 when one did not (a durable runner's service away): the other gauges then leave out what that engine holds, they do not report it as zero."))
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
		metric.WithDescription("Work abandoned by an in-process engine's Shutdown because its child had not returned a grace period after cancellation, by target."))
	err = errors.Join(err, e)
	in.backgrounded, e = m.Int64Counter(metricBackgrounded, metric.WithUnit("{call}"),
		metric.WithDescription("Child calls made without run_in_background that were still unfinished at their bound and returned a work.ref (the auto-background option), by target."))
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
	for i, s := range observe.States {
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
func (in *instruments) record(ctx context.Context, e observe.Event) {
	switch e.Type {
	case observe.EventRefused:
		in.refused.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(
			labelTarget.String(e.Target), labelReason.String(reasonOf(e.ErrorClass)))))
		return
	case observe.EventStatusBlock:
		in.statusRows.Record(ctx, int64(e.Count))
		return
	case observe.EventGuidanceAccepted:
		in.guidance.Add(ctx, int64(e.Count), in.guidanceOpts[0])
		return
	case observe.EventGuidanceDelivered:
		in.guidance.Add(ctx, int64(e.Count), in.guidanceOpts[1])
		return
	case observe.EventGuidanceDropped:
		in.guidance.Add(ctx, int64(e.Count), in.guidanceOpts[2])
		return
	case observe.EventOrphaned:
		in.orphaned.Add(ctx, 1, in.forTarget(e.Target).target)
		return
	case observe.EventBackgrounded:
		in.backgrounded.Add(ctx, 1, in.forTarget(e.Target).target)
		return
	}
	i := e.To.Index()
	if i < 0 || e.Type != observe.EventType(e.To) {
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
