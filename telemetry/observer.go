package telemetry

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentwork/agentwork/work/observe"
)

// Observer turns the engine's lifecycle events and model-facing calls into
// OpenTelemetry spans and metrics and log/slog lines. It implements
// observe.Observer and observe.Watcher: pass it to work.New with
// work.WithObserver, and the engine registers itself for the gauges.
// One Observer may serve several engines.
//
// Create one with New. The zero value records nothing (no spans, metrics
// or log lines) and never panics: Begin and Bind return the context they
// were given, Event, Replay and ShutdownReported do nothing, and Watch,
// Status and StatusHandler report the engines it watches. A nil *Observer
// is a zero one that keeps nothing: Watch watches nothing, Status and
// StatusHandler report no engine, Unregister returns nil. It is safe for
// concurrent use, never blocks on I/O (export is the providers' business)
// and never calls back into an engine except its Snapshot (observe.Watched) at
// metric collection and for the status page.
//
// Nothing an Observer records carries content: names, attributes, events,
// links, status descriptions, metric labels and log fields hold only ids,
// target labels, states, counts, sizes, durations and low-cardinality error
// classes.
type Observer struct {
	tracer trace.Tracer // nil when tracing is off
	m      *instruments // nil when metrics are off
	reg    metric.Registration
	bud    *budgetInstruments // nil when metrics are off
	w      *waitInstruments   // nil when metrics are off
	u      *updateInstruments // nil when metrics are off
	log    *slog.Logger
	// snapTimeout bounds each watched engine's Snapshot (WithSnapshotTimeout).
	snapTimeout time.Duration
	// The Snapshots the last census read, and when: a collection's other
	// callback reuses them rather than wait for an engine again.
	lastMu    sync.Mutex
	lastAt    time.Time
	lastSnaps []observe.Snapshot

	// Open work-tool action spans by the work id they name: lifecycle
	// events that arrive after the Work's own span has ended (result read,
	// guidance dropped at a cancel, detach of terminal work) go there.
	actMu   sync.Mutex
	actions map[actionKey]trace.Span
	// Foreground calls in progress by their execute_tool span: Bind
	// starts the child agent's invoke_agent span there and the call's end
	// function ends it.
	foreground map[trace.SpanID]trace.Span
	// Calls that may move to the background (observe.ToolCall.AutoBackground)
	// by their execute_tool span: Bind records the Work's invoke_agent
	// span there, for EventBackgrounded (backgrounded.go). movingN is
	// len(moving), read without the lock.
	moving  map[trace.SpanID]trace.Span
	movingN atomic.Int32

	// When each cancel-requested Work was asked to stop (by work id), for
	// the oldest-cancel-requested gauge and the status page; an entry lives
	// until the Work's terminal event, or until a census finds no watched
	// engine holding the Work cancel-requested.
	cancelMu sync.Mutex
	cancelAt map[string]time.Time

	// Each job's polls by outcome and each Work's updates so far (by work
	// id), for the summaries its span and terminal log line get
	// (tally.go); an entry lives until the Work's terminal or orphaned
	// event, or until a census finds no watched engine holding the Work
	// live.
	tallyMu sync.Mutex
	tallies map[string]workTally
	tallyN  atomic.Int64 // len(tallies), read without the lock

	watchMu sync.Mutex
	watched []observe.Watched

	names     sync.Map // spanNameKey -> span name
	nameCount atomic.Int32
}

var (
	_ observe.Observer         = (*Observer)(nil)
	_ observe.Watcher          = (*Observer)(nil)
	_ observe.ShutdownObserver = (*Observer)(nil)
	_ observe.Replayer         = (*Observer)(nil)
)

// New returns an Observer configured by opts. It fails only when the
// MeterProvider refuses an instrument or the gauge callback.
//
// With metrics on, New registers one callback with the MeterProvider for
// the gauges; it lives as long as the provider (call Unregister to drop it
// earlier).
func New(opts ...Option) (*Observer, error) {
	cfg := newConfig(opts)
	o := &Observer{log: cfg.logger, snapTimeout: cfg.snapTimeout, actions: make(map[actionKey]trace.Span),
		foreground: make(map[trace.SpanID]trace.Span), cancelAt: make(map[string]time.Time)}
	if cfg.tracing {
		o.tracer = cfg.tracerProvider.Tracer(ScopeName)
	}
	if cfg.metrics {
		meter := cfg.meterProvider.Meter(ScopeName)
		m, err := newInstruments(meter)
		if err != nil {
			return nil, err
		}
		w, err := newWaitInstruments(meter)
		if err != nil {
			return nil, err
		}
		u, err := newUpdateInstruments(meter)
		if err != nil {
			return nil, err
		}
		reg, err := meter.RegisterCallback(o.collect,
			append([]metric.Observable{m.items, m.limit, m.slots, m.oldestQueued, m.oldestCancel, m.pollers, m.available}, w.observables()...)...)
		if err != nil {
			return nil, err
		}
		o.m, o.w, o.u, o.reg = m, w, u, reg
		if o.bud, err = newBudgetInstruments(meter, o); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// Unregister drops the gauge callback from the MeterProvider; afterwards the
// gauges report nothing. The counters and spans keep working. It is
// idempotent.
func (o *Observer) Unregister() error {
	if o == nil {
		o = new(Observer) // a nil Observer is the zero one
	}
	if o.reg == nil {
		return nil
	}
	if o.bud != nil {
		if err := o.bud.reg.Unregister(); err != nil {
			return err
		}
	}
	return o.reg.Unregister()
}

// Event records one lifecycle event: a span event, metrics and a log line.
//
// For a Work's events ctx is what Bind returned, so the span event goes on
// its "invoke_agent" span, named as in the package documentation, with
// agentwork.work.state (transitions), agentwork.guidance.count,
// agentwork.result.bytes and error.type where they apply. Every transition
// also sets agentwork.work.state on the span; a terminal one ends it at
// e.Time (failed: status Error, empty description, error.type set).
// EventOrphaned ends it too, after its span event, at e.Time: status Error,
// error.type=orphaned; if the child returns later, its terminal event
// still counts in the metrics and the log but finds the span ended. An
// event that arrives after the span ended goes on the open
// "execute_tool work" span of a work-tool call naming the same Work, if
// there is one (a result read, guidance dropped by a cancel, a detach).
//
// EventRefused and EventStatusBlock carry the caller's context: they become
// the events "agentwork.start.refused" (error.type = the reason) and
// "agentwork.status_block" (agentwork.status_block.rows) on the caller's
// span, when it records.
//
// EventWaiting, EventApprovalRequested, EventApproved and EventDenied are
// span events (agentwork.work.waiting, ...approval_requested, ...approved,
// ...denied) and log lines. EventPolled adds no span event and no log
// line: it counts in agentwork_job_polls_total{target,outcome} and in the
// Work's poll counts, which its span gets as one agentwork.work.polls
// event (and the agentwork.job.polls attribute) as it ends, and its
// terminal log line as fields.
//
// EventBackgrounded (a call that moved to the background at its bound) is
// the span event agentwork.work.backgrounded (agentwork.work.state: the
// state it moved in) on the Work's "invoke_agent" span when the Work was
// bound in this process, else on the call's "execute_tool" span in ctx; it
// counts in agentwork_work_backgrounded_total{target} and writes an Info
// log line.
//
// EventUpdate (a child's update, accepted or refused) is the span event
// agentwork.work.update (agentwork.update.seq, agentwork.update.bytes,
// agentwork.update.question; error.type for a refusal), at most
// maxUpdateEvents (32) per Work, the rest counted; it counts in
// agentwork_work_updates_total{target,outcome} and, accepted, in
// agentwork_work_update_bytes{target}, and writes a log line. The Work's
// span gets agentwork.work.updates, agentwork.work.updates.refused (and
// agentwork.work.updates.unrecorded) as it ends, its terminal log line the
// non-zero counts. Never an update's value.
func (o *Observer) Event(ctx context.Context, e observe.Event) {
	if o == nil {
		o = new(Observer) // a nil Observer is the zero one
	}
	switch {
	case e.Type == observe.EventCancelRequested && e.WorkID != "":
		o.cancelMu.Lock()
		if o.cancelAt == nil { // the zero Observer
			o.cancelAt = make(map[string]time.Time)
		}
		o.cancelAt[e.WorkID] = e.Time
		o.cancelMu.Unlock()
	case e.To.Terminal() && e.Type == observe.EventType(e.To):
		o.cancelMu.Lock()
		delete(o.cancelAt, e.WorkID)
		o.cancelMu.Unlock()
	}
	if o.log == nil { // the zero Observer: no tracer, meter or logger
		return
	}
	if o.budgetEvent(ctx, e) || o.waitEvent(ctx, e) || o.updateEvent(ctx, e) {
		return
	}
	if o.tracer != nil {
		o.spanEvent(ctx, e)
	}
	if o.m != nil {
		o.m.record(ctx, e)
	}
	o.logEvent(ctx, e)
	o.forgetTally(e)
}

// Replay records a replayed event on the Work's span in ctx (what Bind
// returned for it), as Event does, and nothing else: no metric, no log
// line, no event on a work-tool action span (see observe.Replayer). A
// terminal transition ends the span at e.Time. A replayed EventPolled
// counts for the poll summary the span gets as it ends; a replayed
// EventUpdate is its span event (within the Work's bound) and counts for
// the span's update counts.
func (o *Observer) Replay(ctx context.Context, e observe.Event) {
	if o == nil {
		o = new(Observer) // a nil Observer is the zero one
	}
	if o.tracer == nil || e.WorkID == "" || !trace.SpanFromContext(ctx).IsRecording() {
		return
	}
	if e.Type == observe.EventBudgetExhausted || e.Type == observe.EventUsage {
		o.budgetSpan(ctx, e)
		return
	}
	if e.Type == observe.EventPolled {
		o.countPoll(e.WorkID, pollIndex(e.Poll))
		return
	}
	if e.Type == observe.EventUpdate {
		o.updateSpan(ctx, e, updateIndex(e.ErrorClass))
		return
	}
	o.spanEvent(ctx, e)
	o.forgetTally(e)
}
