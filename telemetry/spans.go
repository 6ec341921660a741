package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

func nopEnd(observe.ToolCallEnd) {}

// Options and attributes the hot path would otherwise allocate on every
// call (an option is an interface: boxing a value allocates).
var (
	internalKind = trace.WithSpanKind(trace.SpanKindInternal)
	newRoot      = trace.WithNewRoot()
	// By observe.States index: the agentwork.work.state attribute, as a
	// slice for SetAttributes and as a span event option.
	stateAttrs    [len(observe.States)][]attribute.KeyValue
	stateEventOpt [len(observe.States)]trace.EventOption
)

func init() {
	for i, st := range observe.States {
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
//   - ToolCallLaunch, ToolCallForeground: "execute_tool {c.Tool}", INTERNAL, with
//     gen_ai.operation.name=execute_tool, gen_ai.tool.name and
//     agentwork.work.target set to c.Tool, gen_ai.tool.type=function,
//     gen_ai.tool.description when ctx carries an observe.TargetInfo with one,
//     and gen_ai.tool.call.id. For a launch the end function sets
//     agentwork.work.id from ToolCallEnd.WorkID; the launch span also gets a
//     link to the Work's "invoke_agent" span (see Bind). For a foreground
//     agent child the end function also ends its "invoke_agent" span.
//   - ToolCallAction: "execute_tool work", INTERNAL, with
//     gen_ai.operation.name=execute_tool, gen_ai.tool.name=work,
//     gen_ai.tool.type=function, agentwork.action (one of the six actions,
//     else "invalid"),
//     agentwork.work.id when c.WorkID has the engine's id form (the
//     middleware sets it only for a Work that exists for that owner), and
//     gen_ai.tool.call.id. The end function counts the call in
//     agentwork_work_actions_total{action,outcome}.
//
// An outcome other than ok and timeout marks the span as an error: status
// Error with an empty description and error.type set to ToolCallEnd.ErrorClass
// (or the outcome when there is no class). A tool-call id is recorded only
// when it has a provider-issued shape: 1 to 64 ASCII letters, digits, '_'
// and '-'.
//
// When the framework traces the call itself (observe.ToolCallTraced: its
// execute_tool span is ctx's current span), Begin starts no span: the
// framework's span takes the place of "execute_tool {c.Tool}" or
// "execute_tool work" (it gets agentwork.work.target, or agentwork.action
// and agentwork.work.id, and a launch's agentwork.work.id and link; never
// a status, an error.type or an end from agentwork), a foreground agent
// child's "invoke_agent" span is its child, and the metrics and log lines
// are those of any call.
func (o *Observer) Begin(ctx context.Context, c observe.ToolCall) (context.Context, func(observe.ToolCallEnd)) {
	if o == nil {
		o = new(Observer) // a nil Observer is the zero one
	}
	if o.tracer == nil && (o.m == nil || c.Kind != observe.ToolCallAction) {
		if c.Kind == observe.ToolCallForeground {
			return ctx, func(ce observe.ToolCallEnd) { o.logForeground(ctx, c, ce) }
		}
		return ctx, nopEnd
	}
	if o.tracer != nil && observe.ToolCallTraced(ctx) {
		return o.beginTraced(ctx, c)
	}
	action := ""
	if c.Kind == observe.ToolCallAction {
		action = normAction(c.Action)
	}
	var span trace.Span
	var fgID, moveID trace.SpanID
	var tracked actionKey // set when the span is registered for late events
	if o.tracer != nil {
		var name string
		sc := getScratch()
		attrs := append(sc.attributes(), keyOperation.String(opExecuteTool), keyToolType.String(toolTypeFunction))
		if c.Kind == observe.ToolCallAction {
			name = spanWorkAction
			attrs = append(attrs, keyToolName.String("work"), keyAction.String(action))
			if boundary.IsID(c.WorkID) {
				attrs = append(attrs, keyWorkID.String(c.WorkID))
				tracked = actionKey{c.Owner, c.WorkID}
			}
		} else {
			name = o.spanName(spanExecuteTool, c.Tool)
			attrs = append(attrs, keyToolName.String(c.Tool), keyWorkTarget.String(c.Tool))
			if info, ok := observe.TargetInfoFrom(ctx); ok && info.Description != "" {
				attrs = append(attrs, keyToolDesc.String(info.Description))
			}
		}
		if validCallID(c.CallID) {
			attrs = append(attrs, keyToolCallID.String(c.CallID))
		}
		ctx, span = o.tracer.Start(ctx, name, append(sc.start[:0], internalKind, sc.withAttributes(attrs))...)
		sc.put()
		if c.Kind == observe.ToolCallLaunch && c.AutoBackground > 0 && span.IsRecording() {
			moveID = span.SpanContext().SpanID()
			o.trackMove(moveID)
		}
		if c.Kind == observe.ToolCallForeground && span.IsRecording() {
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
	return ctx, func(ce observe.ToolCallEnd) {
		outcome := normOutcome(ce.Outcome)
		if fgID.IsValid() {
			o.endForeground(fgID, outcome, ce.ErrorClass)
		}
		if moveID.IsValid() {
			o.untrackMove(moveID)
		}
		if span != nil {
			if c.Kind == observe.ToolCallLaunch && boundary.IsID(ce.WorkID) {
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
		if c.Kind == observe.ToolCallAction && o.m != nil {
			o.m.actions.Add(ctx, 1, o.m.action(action, outcome)...)
		}
		if c.Kind == observe.ToolCallForeground {
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
//     gen_ai.provider.name when caller carries an observe.TargetInfo with them.
//     The launch span gets the reverse link (Span.AddLink), so either end
//     leads to the other. The child's own spans nest under it; the span
//     ends with the Work's terminal event, or with EventOrphaned when
//     Shutdown abandons the Work.
//   - EventForeground: exec carrying caller's current span (normally the
//     "execute_tool {label}" span Begin started), so the child's spans nest
//     under the call. For an agent child (work.KindAgent) called through
//     Begin, exec carries instead a child span of it, "invoke_agent
//     {e.Target}" with the attributes above (no work id: there is no
//     Work), which the call's end function ends.
//
// Nothing else of caller reaches the returned context.
func (o *Observer) Bind(caller, exec context.Context, e observe.Event) context.Context {
	if o == nil {
		o = new(Observer) // a nil Observer is the zero one
	}
	switch e.Type {
	case observe.EventForeground:
		sp := trace.SpanFromContext(caller)
		if !sp.SpanContext().IsValid() {
			return exec
		}
		exec = trace.ContextWithSpan(exec, sp)
		if o.tracer == nil || e.Kind != work.KindAgent {
			return exec
		}
		if tc, ok := caller.Value(tracedCallKey{}).(*tracedCall); ok {
			ctx, child := o.startForegroundAgent(exec, caller, e)
			tc.bind(child)
			return ctx
		}
		id := sp.SpanContext().SpanID()
		o.actMu.Lock()
		_, pending := o.foreground[id]
		o.actMu.Unlock()
		if !pending {
			return exec
		}
		ctx, child := o.startForegroundAgent(exec, caller, e)
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
	case observe.EventQueued:
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
		attrs = appendAgentInfo(attrs, caller, e.Kind)
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
		o.bindMove(caller, span)
		return ctx
	}
	return exec
}

// startForegroundAgent starts a foreground agent child's "invoke_agent"
// span, a child of exec's span.
func (o *Observer) startForegroundAgent(exec, caller context.Context, e observe.Event) (context.Context, trace.Span) {
	sc := getScratch()
	attrs := append(sc.attributes(),
		keyOperation.String(opInvokeAgent), keyAgentName.String(e.Target), keyWorkTarget.String(e.Target))
	attrs = appendAgentInfo(attrs, caller, e.Kind)
	ctx, child := o.tracer.Start(exec, o.spanName(spanInvokeAgent, e.Target), append(sc.start[:0], internalKind, sc.withAttributes(attrs))...)
	sc.put()
	return ctx, child
}

// appendAgentInfo adds gen_ai.agent.id and gen_ai.provider.name from the
// observe.TargetInfo ctx carries, when they are set and look like
// identifiers (an id or provider name is never free text). An agent
// child (kind work.KindAgent) always gets gen_ai.provider.name, a
// Required attribute of invoke_agent: ProviderUnknown when no valid one
// is known; other children get none.
func appendAgentInfo(attrs []attribute.KeyValue, ctx context.Context, kind observe.Kind) []attribute.KeyValue {
	info, _ := observe.TargetInfoFrom(ctx)
	if validCallID(info.AgentID) {
		attrs = append(attrs, keyAgentID.String(info.AgentID))
	}
	switch {
	case validProvider(info.Provider):
		attrs = append(attrs, keyProvider.String(info.Provider))
	case kind == work.KindAgent:
		attrs = append(attrs, keyProvider.String(ProviderUnknown))
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
	finishForeground(child, outcome, class)
}

// finishForeground ends a foreground agent child's "invoke_agent" span
// (nil: none) with the call's outcome.
func finishForeground(child trace.Span, outcome, class string) {
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

// actionKey keys an open work-tool action span by its owner and the Work
// it names, so a late event only ever lands on its own owner's span (an
// action naming another owner's Work is not_found and must not receive
// that Work's events). A struct rather than a joined string: looking one
// up allocates nothing.
type actionKey struct{ owner, workID string }

func (o *Observer) spanEvent(ctx context.Context, e observe.Event) {
	name := eventName(e.Type)
	if name == "" {
		return
	}
	span := trace.SpanFromContext(ctx)
	if e.Type == observe.EventBackgrounded {
		span = o.moveSpan(ctx)
	}
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
	transition := e.To != "" && e.Type == observe.EventType(e.To)
	si := e.To.Index()
	sc := getScratch()
	defer sc.put()
	if own && (e.Type == observe.EventOrphaned || (transition && e.To.Terminal())) {
		o.pollSummary(span, e, sc) // before the attributes below: it uses sc too
		o.updateSummary(span, e)
	}
	attrs := sc.attributes()
	if transition && si >= 0 {
		attrs = append(attrs, stateAttrs[si]...)
	}
	plain := len(attrs) // the state alone: a precomputed option
	switch e.Type {
	case observe.EventGuidanceAccepted, observe.EventGuidanceDelivered, observe.EventGuidanceDropped:
		attrs = append(attrs, keyGuidanceN.Int(e.Count))
	case observe.EventStatusBlock:
		attrs = append(attrs, keyStatusRows.Int(e.Count))
	case observe.EventCompleted, observe.EventResultRead:
		attrs = append(attrs, keyResultBytes.Int(e.Bytes))
	case observe.EventRefused:
		attrs = append(attrs, keyErrorType.String(reasonOf(e.ErrorClass)))
	case observe.EventProgress:
		attrs = append(attrs, keyProgressDone.Int64(e.Progress.Done), keyProgressTotal.Int64(e.Progress.Total),
			keyProgressRequests.Int64(e.Progress.ModelRequests), keyProgressTools.Int64(e.Progress.ToolCalls))
	case observe.EventOrphaned, observe.EventBackgrounded:
		attrs = append(attrs, keyWorkState.String(string(e.From)))
	}
	et := ""
	if e.Type == observe.EventFailed {
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
	if !own {
		return
	}
	switch {
	case e.Type == observe.EventOrphaned:
		// Shutdown abandoned the Work: its span ends here, so that an
		// exporter sees it. A terminal event that follows (the child
		// returned after all) finds the span no longer recording: nothing
		// more lands on it and it is not ended again; its metrics count.
		et = errorType(e.ErrorClass)
		if et == "" {
			et = work.ClassOrphaned
		}
		span.SetAttributes(keyErrorType.String(et), keyWorkState.String(string(e.From)))
		span.SetStatus(codes.Error, "")
	case !transition || !e.To.Terminal():
		// The span's agentwork.work.state is its start's (queued) until
		// it ends: an exporter sees a span once, ended, and every
		// transition is an event with its state. Setting it on each
		// transition only grew the span's attributes (the SDK appends and
		// de-duplicates at the end, with a map that allocates three times
		// once the list passes eight entries).
		return
	default:
		if si >= 0 {
			span.SetAttributes(stateAttrs[si]...)
		}
		if e.To == work.StateFailed {
			span.SetAttributes(keyErrorType.String(et))
			span.SetStatus(codes.Error, "")
		}
	}
	if e.Time.IsZero() {
		span.End()
	} else {
		span.End(append(sc.end[:0], trace.WithTimestamp(e.Time))...)
	}
}
