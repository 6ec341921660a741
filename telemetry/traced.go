package telemetry

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/trace"

	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// tracedCallKey carries a foreground call the framework traces
// (beginTraced) from Begin to Bind.
type tracedCallKey struct{}

// tracedCall holds a traced foreground call's "invoke_agent" span between
// Bind, which starts it, and the call's end, which ends it (an agent
// child's Bind and the call's end may race: the later of the two ends
// it).
type tracedCall struct {
	mu    sync.Mutex
	span  trace.Span
	ended bool
}

func (t *tracedCall) bind(span trace.Span) {
	t.mu.Lock()
	if !t.ended {
		t.span, span = span, nil
	}
	t.mu.Unlock()
	if span != nil { // the call ended meanwhile
		span.End()
	}
}

func (t *tracedCall) end() trace.Span {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ended = true
	s := t.span
	t.span = nil
	return s
}

// beginTraced is Begin for a call whose span the framework made
// (observe.ToolCallTraced): no span of agentwork's; agentwork's attributes on
// the framework's span while it records; the foreground agent child's
// span under it; the metrics and logs of any call.
func (o *Observer) beginTraced(ctx context.Context, c observe.ToolCall) (context.Context, func(observe.ToolCallEnd)) {
	span := trace.SpanFromContext(ctx)
	action := ""
	if c.Kind == observe.ToolCallAction {
		action = normAction(c.Action)
		if span.IsRecording() {
			span.SetAttributes(keyAction.String(action))
			if boundary.IsID(c.WorkID) {
				span.SetAttributes(keyWorkID.String(c.WorkID))
			}
		}
	} else if span.IsRecording() {
		span.SetAttributes(keyWorkTarget.String(c.Tool))
	}
	var tc *tracedCall
	if c.Kind == observe.ToolCallForeground {
		tc = &tracedCall{}
		ctx = context.WithValue(ctx, tracedCallKey{}, tc)
	}
	var moveID trace.SpanID
	if c.Kind == observe.ToolCallLaunch && c.AutoBackground > 0 && span.IsRecording() {
		moveID = span.SpanContext().SpanID()
		o.trackMove(moveID)
	}
	return ctx, func(ce observe.ToolCallEnd) {
		outcome := normOutcome(ce.Outcome)
		if tc != nil {
			finishForeground(tc.end(), outcome, ce.ErrorClass)
		}
		if moveID.IsValid() {
			o.untrackMove(moveID)
		}
		if c.Kind == observe.ToolCallLaunch && boundary.IsID(ce.WorkID) && span.IsRecording() {
			span.SetAttributes(keyWorkID.String(ce.WorkID))
		}
		if c.Kind == observe.ToolCallAction && o.m != nil {
			o.m.actions.Add(ctx, 1, o.m.action(action, outcome)...)
		}
		if c.Kind == observe.ToolCallForeground {
			o.logForeground(ctx, c, ce)
		}
	}
}
