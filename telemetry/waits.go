package telemetry

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentwork/agentwork/work/observe"
)

// Telemetry of Work that waits: external jobs polled with backoff and Work
// awaiting approval. The names are public API like the rest (DESIGN.md).
const (
	evWaiting           = "agentwork.work.waiting"
	evApprovalRequested = "agentwork.work.approval_requested"
	evApproved          = "agentwork.work.approved"
	evDenied            = "agentwork.work.denied"
	// evPolls is the one span event that summarizes a job's polls, by
	// outcome, just before the span ends: a job polled every 30 s for a
	// day (about 2,900 polls) adds one event, not 2,900.
	evPolls = "agentwork.work.polls"

	// keyPolls is the span attribute with a job's total polls, set as
	// its span ends (searchable where event attributes are not).
	keyPolls        = attribute.Key("agentwork.job.polls")
	keyPollsWaiting = attribute.Key("agentwork.job.polls.waiting")
	keyPollsDone    = attribute.Key("agentwork.job.polls.done")
	keyPollsFailed  = attribute.Key("agentwork.job.polls.failed")
	keyPollsError   = attribute.Key("agentwork.job.polls.error")

	metricWaiting          = "agentwork.work.waiting"             // agentwork_work_waiting
	metricAwaitingApproval = "agentwork.work.awaiting_approval"   // agentwork_work_awaiting_approval
	metricOldestApproval   = "agentwork.work.oldest_approval_age" // agentwork_work_oldest_approval_age_seconds
	metricPolls            = "agentwork.job.polls"                // agentwork_job_polls_total

	// Log fields of a job's terminal line: its polls by outcome (only
	// the non-zero ones).
	logPollsWaiting = "polls.waiting"
	logPollsDone    = "polls.done"
	logPollsFailed  = "polls.failed"
	logPollsError   = "polls.error"
)

// pollOutcomes are the values of the outcome label of
// agentwork_job_polls_total, in pollCounts order; anything else an engine
// reports is "_OTHER".
var pollOutcomes = [...]string{observe.PollOutcomeWaiting, observe.PollOutcomeDone, observe.PollOutcomeFailed,
	observe.PollOutcomeError, otherErrorType}

// pollCounts is one job's polls by outcome, in pollOutcomes order.
type pollCounts [len(pollOutcomes)]uint32

func (c pollCounts) total() int64 {
	var n int64
	for _, v := range c {
		n += int64(v)
	}
	return n
}

// pollIndex is the index of outcome in pollOutcomes ("_OTHER" for one
// that is not a work.PollOutcome*).
func pollIndex(outcome string) int {
	for i, v := range pollOutcomes[:len(pollOutcomes)-1] {
		if outcome == v {
			return i
		}
	}
	return len(pollOutcomes) - 1
}

// waitEventName is the span event (and log message) of a wait event, ""
// for any other type. EventPolled has none: polls are counted (see
// evPolls).
func waitEventName(t observe.EventType) string {
	switch t {
	case observe.EventWaiting:
		return evWaiting
	case observe.EventApprovalRequested:
		return evApprovalRequested
	case observe.EventApproved:
		return evApproved
	case observe.EventDenied:
		return evDenied
	}
	return ""
}

// waitLogLevel is the level of a wait event's log line: Info for the
// approval events (a person is asked, or answered), Debug for the rest.
func waitLogLevel(t observe.EventType) slog.Level {
	switch t {
	case observe.EventApprovalRequested, observe.EventApproved, observe.EventDenied:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

// waitInstruments are the metrics of Work that waits.
type waitInstruments struct {
	waiting, awaiting metric.Int64ObservableGauge
	oldestApproval    metric.Float64ObservableGauge
	polls             metric.Int64Counter
	targets           sync.Map // target label -> *waitTargetOpts
}

// waitTargetOpts are the attribute sets of one target label.
type waitTargetOpts struct {
	target  metric.MeasurementOption              // {target}
	pollAdd [len(pollOutcomes)][]metric.AddOption // {outcome, target}
}

// forTarget returns the attribute sets of target, creating them once.
func (w *waitInstruments) forTarget(target string) *waitTargetOpts {
	if v, ok := w.targets.Load(target); ok {
		return v.(*waitTargetOpts)
	}
	t := &waitTargetOpts{target: metric.WithAttributeSet(attribute.NewSet(labelTarget.String(target)))}
	for i, oc := range pollOutcomes {
		t.pollAdd[i] = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(labelOutcome.String(oc), labelTarget.String(target)))}
	}
	v, _ := w.targets.LoadOrStore(target, t)
	return v.(*waitTargetOpts)
}

func newWaitInstruments(m metric.Meter) (*waitInstruments, error) {
	var (
		w      waitInstruments
		err, e error
	)
	w.waiting, e = m.Int64ObservableGauge(metricWaiting, metric.WithUnit("{work}"),
		metric.WithDescription("External jobs waiting for their result by target: running Work that holds no running slot between polls (also counted as running in agentwork_work_items)."))
	err = errors.Join(err, e)
	w.awaiting, e = m.Int64ObservableGauge(metricAwaitingApproval, metric.WithUnit("{work}"),
		metric.WithDescription("Work awaiting approval before it starts, by target: queued Work held out of the dispatch queue (also counted as queued in agentwork_work_items, not in the oldest-queued age)."))
	err = errors.Join(err, e)
	w.oldestApproval, e = m.Float64ObservableGauge(metricOldestApproval, metric.WithUnit("s"),
		metric.WithDescription("How long the oldest pending approval request by target has waited for an answer (0 when none)."))
	err = errors.Join(err, e)
	w.polls, e = m.Int64Counter(metricPolls, metric.WithUnit("{poll}"),
		metric.WithDescription("Polls of external jobs, by target and outcome (waiting, done, failed, or error for a transient poll error)."))
	err = errors.Join(err, e)
	if err != nil {
		return nil, err
	}
	return &w, nil
}

// observables are the gauges the Observer's callback reports.
func (w *waitInstruments) observables() []metric.Observable {
	return []metric.Observable{w.waiting, w.awaiting, w.oldestApproval}
}

// observe reports the wait gauges from a census: for every target the
// census knows, 0 included.
func (w *waitInstruments) observe(o metric.Observer, c census) {
	if !c.watched {
		return
	}
	for target := range c.counts {
		t := w.forTarget(target).target
		o.ObserveInt64(w.waiting, int64(c.waits.waiting[target]), t)
		o.ObserveInt64(w.awaiting, int64(c.waits.awaiting[target]), t)
		o.ObserveFloat64(w.oldestApproval, c.waits.oldestApproval[target].Seconds(), t)
	}
}

// waitCensus is what a census reads of waiting Work, by target.
type waitCensus struct {
	waiting, awaiting map[string]int
	oldestApproval    map[string]time.Duration
	totalWaiting      int
	totalAwaiting     int
	oldestApprovalAll time.Duration // over all targets
}

// add counts one target's waiting Work of a Snapshot taken at now.
func (wc *waitCensus) add(now time.Time, tc observe.TargetCounts) {
	if wc.waiting == nil {
		wc.waiting, wc.awaiting, wc.oldestApproval = map[string]int{}, map[string]int{}, map[string]time.Duration{}
	}
	wc.waiting[tc.Target] += tc.Waiting
	wc.awaiting[tc.Target] += tc.AwaitingApproval
	wc.totalWaiting += tc.Waiting
	wc.totalAwaiting += tc.AwaitingApproval
	if tc.AwaitingApproval > 0 && !tc.OldestApproval.IsZero() {
		age := max(now.Sub(tc.OldestApproval), 0)
		wc.oldestApproval[tc.Target] = max(wc.oldestApproval[tc.Target], age)
		wc.oldestApprovalAll = max(wc.oldestApprovalAll, age)
	}
}

// waitEvent records EventPolled and reports whether e was one: the
// counter agentwork_job_polls_total{target,outcome} and the Work's count
// for the summary its span and terminal log line get. A poll adds no span
// event and writes no log line.
func (o *Observer) waitEvent(ctx context.Context, e observe.Event) bool {
	if e.Type != observe.EventPolled {
		return false
	}
	i := pollIndex(e.Poll)
	o.countPoll(e.WorkID, i)
	if o.w != nil {
		o.w.polls.Add(ctx, 1, o.w.forTarget(e.Target).pollAdd[i]...)
	}
	return true
}

// countPoll adds one poll of outcome index i to the Work's counts.
func (o *Observer) countPoll(id string, i int) {
	o.tally(id, func(t *workTally) {
		if t.polls[i] < ^uint32(0) {
			t.polls[i]++
		}
	})
}

// pollsOf returns the Work's poll counts so far, and whether it polled.
func (o *Observer) pollsOf(id string) (pollCounts, bool) {
	t, ok := o.tallyOf(id)
	return t.polls, ok && t.polls.total() > 0
}

// pollSummary adds the evPolls span event and the agentwork.job.polls
// attribute to a job's span as it ends, when it polled.
func (o *Observer) pollSummary(span trace.Span, e observe.Event, sc *scratch) {
	c, ok := o.pollsOf(e.WorkID)
	if !ok {
		return
	}
	attrs := append(sc.attributes(), keyPollsWaiting.Int64(int64(c[0])), keyPollsDone.Int64(int64(c[1])),
		keyPollsFailed.Int64(int64(c[2])), keyPollsError.Int64(int64(c[3]+c[4])))
	opts := append(sc.event[:0], sc.withAttributes(attrs))
	if !e.Time.IsZero() {
		opts = append(opts, trace.WithTimestamp(e.Time))
	}
	span.AddEvent(evPolls, opts...)
	span.SetAttributes(keyPolls.Int64(c.total()))
}

// appendPolls adds a job's non-zero poll counts to its terminal log line.
func (o *Observer) appendPolls(attrs []slog.Attr, e observe.Event) []slog.Attr {
	if !e.To.Terminal() && e.Type != observe.EventOrphaned {
		return attrs
	}
	c, ok := o.pollsOf(e.WorkID)
	if !ok {
		return attrs
	}
	for i, k := range [...]string{logPollsWaiting, logPollsDone, logPollsFailed, logPollsError} {
		n := int64(c[i])
		if i == 3 {
			n += int64(c[4])
		}
		if n > 0 {
			attrs = append(attrs, slog.Int64(k, n))
		}
	}
	return attrs
}

// status is the status page's summary of waiting Work.
func (wc *waitCensus) status() StatusWaits {
	return StatusWaits{Waiting: wc.totalWaiting, AwaitingApproval: wc.totalAwaiting,
		OldestApprovalAgeSeconds: wc.oldestApprovalAll.Seconds()}
}
