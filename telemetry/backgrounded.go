package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/trace"
)

// The move of a child call to the background after its bound (the
// middleware's auto-background option, observe.EventBackgrounded): the span
// event agentwork.work.backgrounded on the Work's "invoke_agent" span,
// the counter agentwork_work_backgrounded_total{target} and an Info log
// line. The names are public API like the rest (DESIGN.md).
const (
	evBackgrounded     = "agentwork.work.backgrounded"
	metricBackgrounded = "agentwork.work.backgrounded" // agentwork_work_backgrounded_total
)

// trackMove registers a call that may move (observe.ToolCall.AutoBackground set)
// by its "execute_tool" span id: Bind records there the "invoke_agent"
// span of the Work the call starts, where EventBackgrounded goes.
func (o *Observer) trackMove(id trace.SpanID) {
	o.actMu.Lock()
	if o.moving == nil {
		o.moving = make(map[trace.SpanID]trace.Span)
	}
	o.moving[id] = nil
	o.movingN.Store(int32(len(o.moving)))
	o.actMu.Unlock()
}

// untrackMove forgets a call as it ends.
func (o *Observer) untrackMove(id trace.SpanID) {
	o.actMu.Lock()
	delete(o.moving, id)
	o.movingN.Store(int32(len(o.moving)))
	o.actMu.Unlock()
}

// bindMove records span, the Work's "invoke_agent" span, for the call
// that started it (caller's span) when that call may move. It costs one
// atomic load when no such call is open.
func (o *Observer) bindMove(caller context.Context, span trace.Span) {
	if o.movingN.Load() == 0 {
		return
	}
	id := trace.SpanContextFromContext(caller).SpanID()
	o.actMu.Lock()
	if cur, ok := o.moving[id]; ok && cur == nil {
		o.moving[id] = span
	}
	o.actMu.Unlock()
}

// moveSpan returns the span EventBackgrounded goes on: the Work's
// "invoke_agent" span when it was bound in this process for the call in
// ctx, else the call's own span (a durable runner's worker in another
// process binds the Work there).
func (o *Observer) moveSpan(ctx context.Context) trace.Span {
	span := trace.SpanFromContext(ctx)
	if o.movingN.Load() == 0 {
		return span
	}
	o.actMu.Lock()
	w := o.moving[span.SpanContext().SpanID()]
	o.actMu.Unlock()
	if w != nil && w.IsRecording() {
		return w
	}
	return span
}
