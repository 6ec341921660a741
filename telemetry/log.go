package telemetry

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"

	"github.com/agentwork/agentwork/work/observe"
)

// Log messages: the span event's name ("agentwork.work.completed",
// "agentwork.work.guidance.accepted"), "work start refused", "status block",
// "foreground call" for the end of a foreground child, and "work engine
// shut down" for an engine's Shutdown report. Every line written while a
// span is in ctx carries its trace_id and span_id.
const (
	msgRefused     = "work start refused"
	msgStatusBlock = "status block"
	msgForeground  = "foreground call"
	msgShutdown    = "work engine shut down"
)

// Log field keys.
const (
	logWorkID     = "work.id"
	logTarget     = "work.target"
	logState      = "work.state"
	logFrom       = "from"
	logErrorType  = "error.type"
	logDuration   = "duration"
	logQueueWait  = "queue_wait"
	logCount      = "count"
	logBytes      = "bytes"
	logOwnerDepth = "owner.depth"
	logOutcome    = "outcome"
	logDone       = "progress.done"
	logTotal      = "progress.total"
	logRequests   = "progress.model_requests"
	logTools      = "progress.tool_calls"
	logTraceID    = "trace_id"
	logSpanID     = "span_id"
)

// appendTrace adds trace_id and span_id when ctx carries a valid span
// context, so a log line can be found from its trace and back.
func appendTrace(attrs []slog.Attr, ctx context.Context) []slog.Attr {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return attrs
	}
	return append(attrs, slog.String(logTraceID, sc.TraceID().String()), slog.String(logSpanID, sc.SpanID().String()))
}

// logs reports whether the Observer logs at level (the zero Observer has
// no logger).
func (o *Observer) logs(ctx context.Context, level slog.Level) bool {
	return o.log != nil && o.log.Enabled(ctx, level)
}

// logEvent writes one line for e: Warn for a failure or an orphan, Info
// for a move to the background, the approval events' level for those,
// Debug for anything else. The fields are content-free: id, target label, states, error class,
// durations, counts, sizes and the owner's depth (never the owner's id).
func (o *Observer) logEvent(ctx context.Context, e observe.Event) {
	level := waitLogLevel(e.Type)
	switch e.Type {
	case observe.EventFailed, observe.EventOrphaned:
		level = slog.LevelWarn
	case observe.EventBackgrounded:
		level = slog.LevelInfo
	}
	if !o.logs(ctx, level) {
		return
	}
	var buf [12]slog.Attr
	attrs := buf[:0]
	var msg string
	switch e.Type {
	case observe.EventRefused:
		msg = msgRefused
		attrs = append(attrs, slog.String(logTarget, e.Target), slog.String(logErrorType, reasonOf(e.ErrorClass)))
	case observe.EventStatusBlock:
		msg = msgStatusBlock
		attrs = append(attrs, slog.Int(logCount, e.Count))
	default:
		name := eventName(e.Type)
		if name == "" {
			return
		}
		msg = name
		attrs = append(attrs, slog.String(logWorkID, e.WorkID), slog.String(logTarget, e.Target))
		if e.To != "" {
			attrs = append(attrs, slog.String(logState, string(e.To)))
		}
		if e.From != "" {
			attrs = append(attrs, slog.String(logFrom, string(e.From)))
		}
		if e.Type == observe.EventFailed {
			et := errorType(e.ErrorClass)
			if et == "" {
				et = otherErrorType
			}
			attrs = append(attrs, slog.String(logErrorType, et))
		}
		if e.Type == observe.EventRunning {
			attrs = append(attrs, slog.Duration(logQueueWait, e.QueueWait))
		}
		if e.To.Terminal() {
			attrs = append(attrs, slog.Duration(logDuration, e.Duration))
		}
		if e.Count > 0 {
			attrs = append(attrs, slog.Int(logCount, e.Count))
		}
		if e.Bytes > 0 {
			attrs = append(attrs, slog.Int(logBytes, e.Bytes))
		}
		if e.Type == observe.EventProgress {
			p := e.Progress
			attrs = append(attrs, slog.Int64(logDone, p.Done), slog.Int64(logTotal, p.Total),
				slog.Int64(logRequests, p.ModelRequests), slog.Int64(logTools, p.ToolCalls))
		}
	}
	attrs = o.appendPolls(attrs, e)
	attrs = o.appendUpdates(attrs, e)
	attrs = append(attrs, slog.Int(logOwnerDepth, e.Depth))
	attrs = appendTrace(attrs, ctx)
	o.log.LogAttrs(ctx, level, msg, attrs...)
}

// logForeground writes one line for the end of a foreground call: Warn
// when it failed, Debug otherwise.
func (o *Observer) logForeground(ctx context.Context, c observe.ToolCall, ce observe.ToolCallEnd) {
	outcome := normOutcome(ce.Outcome)
	level := slog.LevelDebug
	if outcome != outcomeOK {
		level = slog.LevelWarn
	}
	if !o.logs(ctx, level) {
		return
	}
	attrs := []slog.Attr{slog.String(logTarget, c.Tool), slog.String(logOutcome, outcome)}
	if et := errorType(ce.ErrorClass); et != "" {
		attrs = append(attrs, slog.String(logErrorType, et))
	}
	o.log.LogAttrs(ctx, level, msgForeground, appendTrace(attrs, ctx)...)
}

// ShutdownReported implements observe.ShutdownObserver: it logs an
// engine's Shutdown report as one line, "work engine shut down", with
// the group "report" (drained, duration, orphans, and one "target/state"
// count per entry under settled and orphaned): Info when every Work
// finished in time, Warn when Work had to be cancelled or was orphaned (a
// durable engine's: when its Close was cut short by ctx). Counts and
// target labels only. The orphans are also counted one by one
// (agentwork_work_orphaned_total) from their events.
func (o *Observer) ShutdownReported(ctx context.Context, r observe.ShutdownReport) {
	if o == nil {
		o = new(Observer) // a nil Observer is the zero one
	}
	level := slog.LevelInfo
	if !r.Drained || r.OrphanCount() > 0 {
		level = slog.LevelWarn
	}
	if !o.logs(ctx, level) {
		return
	}
	o.log.LogAttrs(ctx, level, msgShutdown, slog.Any("report", r))
}
