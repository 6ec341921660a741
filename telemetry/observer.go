package telemetry

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentwork/agentwork/work"
)

// Observer turns the engine's lifecycle events and model-facing calls into
// OpenTelemetry spans and metrics and log/slog lines. It implements
// work.Observer and work.Watcher: pass it to work.New with
// work.WithObserver, and the Supervisor registers itself for the gauges.
// One Observer may serve several Supervisors.
//
// Create one with New; the zero value is not usable. It is safe for
// concurrent use, never blocks on I/O (export is the providers' business)
// and never calls back into a Supervisor except Census and Limits at metric
// collection.
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
	log    *slog.Logger

	// Open work-tool action spans by the work id they name: lifecycle
	// events that arrive after the Work's own span has ended (result read,
	// guidance dropped at a cancel, detach of terminal work) go there.
	actMu   sync.Mutex
	actions map[actionKey]trace.Span
	// Foreground calls in progress by their execute_tool span: Bind
	// starts the child agent's invoke_agent span there and the call's end
	// function ends it.
	foreground map[trace.SpanID]trace.Span

	// When each cancel-requested Work was asked to stop (by work id), for
	// the oldest-cancel-requested gauge and the status page; an entry lives
	// until the Work's terminal event, or until a census finds no watched
	// Supervisor holding the Work cancel-requested.
	cancelMu sync.Mutex
	cancelAt map[string]time.Time

	watchMu sync.Mutex
	watched []*work.Supervisor

	names     sync.Map // spanNameKey -> span name
	nameCount atomic.Int32
}

var (
	_ work.Observer         = (*Observer)(nil)
	_ work.Watcher          = (*Observer)(nil)
	_ work.ShutdownObserver = (*Observer)(nil)
	_ work.Replayer         = (*Observer)(nil)
)

// New returns an Observer configured by opts. It fails only when the
// MeterProvider refuses an instrument or the gauge callback.
//
// With metrics on, New registers one callback with the MeterProvider for
// the gauges; it lives as long as the provider (call Unregister to drop it
// earlier).
func New(opts ...Option) (*Observer, error) {
	cfg := newConfig(opts)
	o := &Observer{log: cfg.logger, actions: make(map[actionKey]trace.Span),
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
		reg, err := meter.RegisterCallback(o.collect, m.items, m.limit, m.slots, m.oldestQueued, m.oldestCancel)
		if err != nil {
			return nil, err
		}
		o.m, o.reg = m, reg
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

func (o *Observer) collect(_ context.Context, ob metric.Observer) error {
	sups := o.watchedSupervisors()
	o.m.observe(ob, o.census(sups))
	return nil
}

// watchedSupervisors returns the Supervisors the Observer reports on.
func (o *Observer) watchedSupervisors() []*work.Supervisor {
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

// Watch adds s to the Supervisors whose live counts the gauges report
// (agentwork_work_items and agentwork_work_concurrency_limit sum over
// them). work.New calls it; the returned function, which Supervisor.Close
// calls, removes s again. It is idempotent.
func (o *Observer) Watch(s *work.Supervisor) (unwatch func()) {
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

func nopEnd(work.CallEnd) {}

// Options and attributes the hot path would otherwise allocate on every
// call (an option is an interface: boxing a value allocates).
var (
	internalKind = trace.WithSpanKind(trace.SpanKindInternal)
	newRoot      = trace.WithNewRoot()
	// By work.States index: the agentwork.work.state attribute, as a
	// slice for SetAttributes and as a span event option.
	stateAttrs    [len(work.States)][]attribute.KeyValue
	stateEventOpt [len(work.States)]trace.EventOption
)

func init() {
	for i, st := range work.States {
		stateAttrs[i] = []attribute.KeyValue{keyWorkState.String(string(st))}
		stateEventOpt[i] = trace.WithAttributes(stateAttrs[i]...)
	}
}

// maxSpanNames bounds the cache of span names.
const maxSpanNames = 1024

type spanNameKey struct{ prefix, label string }

// spanName returns prefix+label, from a bounded cache.
func (o *Observer) spanName(prefix, label string) string {
	k := spanNameKey{prefix, label}
	if v, ok := o.names.Load(k); ok {
		return v.(string)
	}
	name := prefix + label
	if o.nameCount.Load() < maxSpanNames {
		if _, loaded := o.names.LoadOrStore(k, name); !loaded {
			o.nameCount.Add(1)
		}
	}
	return name
}

// Begin starts the span of one model-facing call as a child of ctx's span
// and returns ctx carrying it, with the function that ends it:
//
//   - CallLaunch, CallForeground: "execute_tool {c.Tool}", INTERNAL, with
//     gen_ai.operation.name=execute_tool, gen_ai.tool.name and
//     agentwork.work.target set to c.Tool, gen_ai.tool.type=function,
//     gen_ai.tool.description when ctx carries a work.TargetInfo with one,
//     and gen_ai.tool.call.id. For a launch the end function sets
//     agentwork.work.id from CallEnd.WorkID; the launch span also gets a
//     link to the Work's "invoke_agent" span (see Bind). For a foreground
//     agent child the end function also ends its "invoke_agent" span.
//   - CallAction: "execute_tool work", INTERNAL, with
//     gen_ai.operation.name=execute_tool, gen_ai.tool.name=work,
//     gen_ai.tool.type=function, agentwork.action (one of the six actions,
//     else "invalid"),
//     agentwork.work.id when c.WorkID has the engine's id form (the
//     middleware sets it only for a Work that exists for that owner), and
//     gen_ai.tool.call.id. The end function counts the call in
//     agentwork_work_actions_total{action,outcome}.
//
// An outcome other than ok and timeout marks the span as an error: status
// Error with an empty description and error.type set to CallEnd.ErrorClass
// (or the outcome when there is no class). A tool-call id is recorded only
// when it has a provider-issued shape: 1 to 64 ASCII letters, digits, '_'
// and '-'.
func (o *Observer) Begin(ctx context.Context, c work.Call) (context.Context, func(work.CallEnd)) {
	if o.tracer == nil && (o.m == nil || c.Kind != work.CallAction) {
		if c.Kind == work.CallForeground {
			return ctx, func(ce work.CallEnd) { o.logForeground(ctx, c, ce) }
		}
		return ctx, nopEnd
	}
	action := ""
	if c.Kind == work.CallAction {
		action = normAction(c.Action)
	}
	var span trace.Span
	var fgID trace.SpanID
	var tracked actionKey // set when the span is registered for late events
	if o.tracer != nil {
		var name string
		sc := getScratch()
		attrs := append(sc.attributes(), keyOperation.String(opExecuteTool), keyToolType.String(toolTypeFunction))
		if c.Kind == work.CallAction {
			name = spanWorkAction
			attrs = append(attrs, keyToolName.String("work"), keyAction.String(action))
			if work.IsID(c.WorkID) {
				attrs = append(attrs, keyWorkID.String(c.WorkID))
				tracked = actionKey{c.Owner, c.WorkID}
			}
		} else {
			name = o.spanName(spanExecuteTool, c.Tool)
			attrs = append(attrs, keyToolName.String(c.Tool), keyWorkTarget.String(c.Tool))
			if info, ok := work.TargetInfoFrom(ctx); ok && info.Description != "" {
				attrs = append(attrs, keyToolDesc.String(info.Description))
			}
		}
		if validCallID(c.CallID) {
			attrs = append(attrs, keyToolCallID.String(c.CallID))
		}
		ctx, span = o.tracer.Start(ctx, name, append(sc.start[:0], internalKind, sc.withAttributes(attrs))...)
		sc.put()
		if c.Kind == work.CallForeground && span.IsRecording() {
			fgID = span.SpanContext().SpanID()
			o.actMu.Lock()
			o.foreground[fgID] = nil // Bind fills it for an agent child
			o.actMu.Unlock()
		}
		if tracked.workID != "" && span.IsRecording() {
			o.actMu.Lock()
			o.actions[tracked] = span
			o.actMu.Unlock()
		} else {
			tracked = actionKey{}
		}
	}
	return ctx, func(ce work.CallEnd) {
		outcome := normOutcome(ce.Outcome)
		if fgID.IsValid() {
			o.endForeground(fgID, outcome, ce.ErrorClass)
		}
		if span != nil {
			if c.Kind == work.CallLaunch && work.IsID(ce.WorkID) {
				span.SetAttributes(keyWorkID.String(ce.WorkID))
			}
			if outcome != outcomeOK && outcome != outcomeTimeout {
				et := errorType(ce.ErrorClass)
				if et == "" {
					et = outcome
				}
				span.SetAttributes(keyErrorType.String(et))
				span.SetStatus(codes.Error, "")
			}
			if tracked.workID != "" {
				o.actMu.Lock()
				if o.actions[tracked] == span {
					delete(o.actions, tracked)
				}
				o.actMu.Unlock()
			}
			span.End()
		}
		if c.Kind == work.CallAction && o.m != nil {
			o.m.actions.Add(ctx, 1, o.m.action(action, outcome)...)
		}
		if c.Kind == work.CallForeground {
			o.logForeground(ctx, c, ce)
		}
	}
}

// Bind gives a child its execution context:
//
//   - EventQueued (a background Work): exec carrying a new root span
//     "invoke_agent {e.Target}", INTERNAL, linked to the span in caller (the
//     launch), with gen_ai.operation.name=invoke_agent, gen_ai.agent.name,
//     agentwork.work.id, agentwork.work.target and agentwork.work.state set
//     at creation, where samplers see them, and gen_ai.agent.id and
//     gen_ai.provider.name when caller carries a work.TargetInfo with them.
//     The launch span gets the reverse link (Span.AddLink), so either end
//     leads to the other. The child's own spans nest under it; the span
//     ends with the Work's terminal event.
//   - EventForeground: exec carrying caller's current span (normally the
//     "execute_tool {label}" span Begin started), so the child's spans nest
//     under the call. For an agent child (work.KindAgent) called through
//     Begin, exec carries instead a child span of it, "invoke_agent
//     {e.Target}" with the attributes above (no work id: there is no
//     Work), which the call's end function ends.
//
// Nothing else of caller reaches the returned context.
func (o *Observer) Bind(caller, exec context.Context, e work.Event) context.Context {
	switch e.Type {
	case work.EventForeground:
		sp := trace.SpanFromContext(caller)
		if !sp.SpanContext().IsValid() {
			return exec
		}
		exec = trace.ContextWithSpan(exec, sp)
		if o.tracer == nil || e.Kind != work.KindAgent {
			return exec
		}
		id := sp.SpanContext().SpanID()
		o.actMu.Lock()
		_, pending := o.foreground[id]
		o.actMu.Unlock()
		if !pending {
			return exec
		}
		sc := getScratch()
		attrs := append(sc.attributes(),
			keyOperation.String(opInvokeAgent), keyAgentName.String(e.Target), keyWorkTarget.String(e.Target))
		attrs = appendAgentInfo(attrs, caller)
		ctx, child := o.tracer.Start(exec, o.spanName(spanInvokeAgent, e.Target), append(sc.start[:0], internalKind, sc.withAttributes(attrs))...)
		sc.put()
		o.actMu.Lock()
		if _, still := o.foreground[id]; still {
			o.foreground[id] = child
			child = nil
		}
		o.actMu.Unlock()
		if child != nil { // the call ended meanwhile
			child.End()
		}
		return ctx
	case work.EventQueued:
		if o.tracer == nil {
			return exec
		}
		sc := getScratch()
		attrs := append(sc.attributes(),
			keyOperation.String(opInvokeAgent),
			keyAgentName.String(e.Target),
			keyWorkID.String(e.WorkID),
			keyWorkTarget.String(e.Target),
			keyWorkState.String(string(work.StateQueued)),
		)
		attrs = appendAgentInfo(attrs, caller)
		opts := append(sc.start[:0], newRoot, internalKind, sc.withAttributes(attrs))
		if !e.Time.IsZero() {
			opts = append(opts, trace.WithTimestamp(e.Time))
		}
		if lsc := trace.SpanContextFromContext(caller); lsc.IsValid() {
			opts = append(opts, sc.withLinkTo(lsc))
		}
		ctx, span := o.tracer.Start(exec, o.spanName(spanInvokeAgent, e.Target), opts...)
		sc.put()
		if launch := trace.SpanFromContext(caller); launch.IsRecording() && span.SpanContext().IsValid() {
			launch.AddLink(trace.Link{SpanContext: span.SpanContext()})
		}
		return ctx
	}
	return exec
}

// appendAgentInfo adds gen_ai.agent.id and gen_ai.provider.name from the
// work.TargetInfo ctx carries, when they are set and look like
// identifiers (an id or provider name is never free text).
func appendAgentInfo(attrs []attribute.KeyValue, ctx context.Context) []attribute.KeyValue {
	info, ok := work.TargetInfoFrom(ctx)
	if !ok {
		return attrs
	}
	if validCallID(info.AgentID) {
		attrs = append(attrs, keyAgentID.String(info.AgentID))
	}
	if validCallID(info.Provider) {
		attrs = append(attrs, keyProvider.String(info.Provider))
	}
	return attrs
}

// endForeground ends the invoke_agent span of the foreground call whose
// execute_tool span is id, if Bind started one.
func (o *Observer) endForeground(id trace.SpanID, outcome, class string) {
	o.actMu.Lock()
	child := o.foreground[id]
	delete(o.foreground, id)
	o.actMu.Unlock()
	if child == nil {
		return
	}
	if outcome != outcomeOK && outcome != outcomeTimeout {
		et := errorType(class)
		if et == "" {
			et = outcome
		}
		child.SetAttributes(keyErrorType.String(et))
		child.SetStatus(codes.Error, "")
	}
	child.End()
}

// Event records one lifecycle event: a span event, metrics and a log line.
//
// For a Work's events ctx is what Bind returned, so the span event goes on
// its "invoke_agent" span, named as in the package documentation, with
// agentwork.work.state (transitions), agentwork.guidance.count,
// agentwork.result.bytes and error.type where they apply. Every transition
// also sets agentwork.work.state on the span; a terminal one ends it at
// e.Time (failed: status Error, empty description, error.type set). An
// event that arrives after the span ended goes on the open
// "execute_tool work" span of a work-tool call naming the same Work, if
// there is one (a result read, guidance dropped by a cancel, a detach).
//
// EventRefused and EventStatusBlock carry the caller's context: they become
// the events "agentwork.start.refused" (error.type = the reason) and
// "agentwork.status_block" (agentwork.status_block.rows) on the caller's
// span, when it records.
func (o *Observer) Event(ctx context.Context, e work.Event) {
	if o.budgetEvent(ctx, e) {
		return
	}
	switch {
	case e.Type == work.EventCancelRequested && e.WorkID != "":
		o.cancelMu.Lock()
		o.cancelAt[e.WorkID] = e.Time
		o.cancelMu.Unlock()
	case e.To.Terminal() && e.Type == work.EventType(e.To):
		o.cancelMu.Lock()
		delete(o.cancelAt, e.WorkID)
		o.cancelMu.Unlock()
	}
	if o.tracer != nil {
		o.spanEvent(ctx, e)
	}
	if o.m != nil {
		o.m.record(ctx, e)
	}
	o.logEvent(ctx, e)
}

// Replay records a replayed event on the Work's span in ctx (what Bind
// returned for it), as Event does, and nothing else: no metric, no log
// line, no event on a work-tool action span (see work.Replayer). A
// terminal transition ends the span at e.Time.
func (o *Observer) Replay(ctx context.Context, e work.Event) {
	if o.tracer == nil || e.WorkID == "" || !trace.SpanFromContext(ctx).IsRecording() {
		return
	}
	if e.Type == work.EventBudgetExhausted || e.Type == work.EventUsage {
		o.budgetSpan(ctx, e)
		return
	}
	o.spanEvent(ctx, e)
}

// actionKey keys an open work-tool action span by its owner and the Work
// it names, so a late event only ever lands on its own owner's span (an
// action naming another owner's Work is not_found and must not receive
// that Work's events). A struct rather than a joined string: looking one
// up allocates nothing.
type actionKey struct{ owner, workID string }

func (o *Observer) spanEvent(ctx context.Context, e work.Event) {
	name := eventName(e.Type)
	if name == "" {
		return
	}
	span := trace.SpanFromContext(ctx)
	own := true
	if !span.IsRecording() {
		if e.WorkID == "" {
			return
		}
		o.actMu.Lock()
		span = o.actions[actionKey{e.Owner, e.WorkID}]
		o.actMu.Unlock()
		if span == nil {
			return
		}
		own = false
	}
	transition := e.To != "" && e.Type == work.EventType(e.To)
	si := stateIndex(e.To)
	sc := getScratch()
	defer sc.put()
	attrs := sc.attributes()
	if transition && si >= 0 {
		attrs = append(attrs, stateAttrs[si]...)
	}
	plain := len(attrs) // the state alone: a precomputed option
	switch e.Type {
	case work.EventGuidanceAccepted, work.EventGuidanceDelivered, work.EventGuidanceDropped:
		attrs = append(attrs, keyGuidanceN.Int(e.Count))
	case work.EventStatusBlock:
		attrs = append(attrs, keyStatusRows.Int(e.Count))
	case work.EventCompleted, work.EventResultRead:
		attrs = append(attrs, keyResultBytes.Int(e.Bytes))
	case work.EventRefused:
		attrs = append(attrs, keyErrorType.String(reasonOf(e.ErrorClass)))
	case work.EventProgress:
		attrs = append(attrs, keyProgressDone.Int64(e.Progress.Done), keyProgressTotal.Int64(e.Progress.Total),
			keyProgressRequests.Int64(e.Progress.ModelRequests), keyProgressTools.Int64(e.Progress.ToolCalls))
	case work.EventOrphaned:
		attrs = append(attrs, keyWorkState.String(string(e.From)))
	}
	et := ""
	if e.Type == work.EventFailed {
		et = errorType(e.ErrorClass)
		if et == "" {
			et = otherErrorType
		}
		attrs = append(attrs, keyErrorType.String(et))
		if e.Bytes > 0 {
			attrs = append(attrs, keyResultBytes.Int(e.Bytes))
		}
	}
	opts := sc.event[:0]
	if plain == 1 && len(attrs) == 1 {
		opts = append(opts, stateEventOpt[si])
	} else {
		opts = append(opts, sc.withAttributes(attrs))
	}
	if !e.Time.IsZero() {
		opts = append(opts, trace.WithTimestamp(e.Time))
	}
	span.AddEvent(name, opts...)
	if !own || !transition {
		return
	}
	if si >= 0 {
		span.SetAttributes(stateAttrs[si]...)
	}
	if !e.To.Terminal() {
		return
	}
	if e.To == work.StateFailed {
		span.SetAttributes(keyErrorType.String(et))
		span.SetStatus(codes.Error, "")
	}
	if e.Time.IsZero() {
		span.End()
	} else {
		span.End(append(sc.end[:0], trace.WithTimestamp(e.Time))...)
	}
}
