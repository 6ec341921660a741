package telemetry

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// Telemetry of children that talk back (observe.EventUpdate): sequence
// numbers, sizes, the question flag and outcomes, never an update's value.
// The names are public API like the rest (DESIGN.md).
const (
	// evUpdate is the span event (and log message) of one update a
	// child reported, accepted or refused.
	evUpdate = "agentwork.work.update"

	keyUpdateSeq      = attribute.Key("agentwork.update.seq")
	keyUpdateBytes    = attribute.Key("agentwork.update.bytes")
	keyUpdateQuestion = attribute.Key("agentwork.update.question")

	// Span attributes set as a span that had updates ends: the accepted
	// and refused updates, and how many of them got no span event (see
	// maxUpdateEvents).
	keyUpdates           = attribute.Key("agentwork.work.updates")
	keyUpdatesRefused    = attribute.Key("agentwork.work.updates.refused")
	keyUpdatesUnrecorded = attribute.Key("agentwork.work.updates.unrecorded")

	metricUpdates     = "agentwork.work.updates" // agentwork_work_updates_total
	metricUpdateBytes = "agentwork.work.update"  // agentwork_work_update_bytes

	// Log fields: an update's line has update.seq (accepted only) and
	// update.question; a Work's terminal line its non-zero counts.
	logUpdateSeq       = "update.seq"
	logUpdateQuestion  = "update.question"
	logUpdatesAccepted = "updates.accepted"
	logUpdatesRefused  = "updates.refused"

	// outcomeAccepted is the outcome label of an accepted update.
	outcomeAccepted = "accepted"
)

// maxUpdateEvents bounds the agentwork.work.update span events of one
// Work: as many as a Work accepts by default (work.UpdatePolicy's). A Work
// allowed more (up to 1,024), or a child that keeps
// reporting after refusals (which have no bound of their own), gets no
// event for the rest: they are counted (agentwork.work.updates.unrecorded)
// and in the metrics as usual. A foreground call's child (no Work, WorkID
// "") gets none.
var maxUpdateEvents = uint32(driver.ResolveUpdates(work.UpdatePolicy{}).MaxUpdates)

// updateOutcomes are the values of the outcome label of
// agentwork_work_updates_total: accepted, then the refusal reasons; a
// reason an engine reports that is not a work.UpdateRefused* constant is
// "_OTHER".
var updateOutcomes = [...]string{outcomeAccepted, observe.UpdateRefusedNotDeclared, observe.UpdateRefusedCount,
	observe.UpdateRefusedBytes, observe.UpdateRefusedEnding, observe.UpdateRefusedConflict, observe.UpdateRefusedInvalid,
	observe.UpdateRefusedUnavailable, otherErrorType}

// updateBytesBuckets go by fours from 16 B to 1 MiB: a Work's updates
// take 16 KiB in all by default, at most 1 MiB.
var updateBytesBuckets = []float64{16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576}

// updateIndex is the index of an EventUpdate's outcome in updateOutcomes:
// 0 when class is "" (accepted).
func updateIndex(class string) int {
	if class == "" {
		return 0
	}
	for i, v := range updateOutcomes[1 : len(updateOutcomes)-1] {
		if class == v {
			return i + 1
		}
	}
	return len(updateOutcomes) - 1
}

// updateCounts is one Work's updates so far.
type updateCounts struct {
	accepted, refused uint32
	recorded          uint32 // span events added (at most maxUpdateEvents)
	unrecorded        uint32 // updates past maxUpdateEvents
}

func (c updateCounts) any() bool { return c.accepted > 0 || c.refused > 0 }

// updateInstruments are the metrics of updates.
type updateInstruments struct {
	updates metric.Int64Counter
	bytes   metric.Int64Histogram
	targets sync.Map // target label -> *updateTargetOpts
}

// updateTargetOpts are the attribute sets of one target label.
type updateTargetOpts struct {
	add [len(updateOutcomes)][]metric.AddOption // {outcome, target}
	rec []metric.RecordOption                   // {target}
}

func newUpdateInstruments(m metric.Meter) (*updateInstruments, error) {
	var (
		u      updateInstruments
		err, e error
	)
	u.updates, e = m.Int64Counter(metricUpdates, metric.WithUnit("{update}"),
		metric.WithDescription("Updates children reported while running, by target and outcome: accepted, or the reason it was refused (not_declared, count, bytes, ending, conflict, invalid)."))
	err = errors.Join(err, e)
	u.bytes, e = m.Int64Histogram(metricUpdateBytes, metric.WithUnit("By"),
		metric.WithDescription("Size of accepted updates' encoded payloads in bytes, by target (sizes only, never content)."),
		metric.WithExplicitBucketBoundaries(updateBytesBuckets...))
	err = errors.Join(err, e)
	if err != nil {
		return nil, err
	}
	return &u, nil
}

// forTarget returns the attribute sets of target, creating them once.
func (u *updateInstruments) forTarget(target string) *updateTargetOpts {
	if v, ok := u.targets.Load(target); ok {
		return v.(*updateTargetOpts)
	}
	t := &updateTargetOpts{rec: []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(labelTarget.String(target)))}}
	for i, oc := range updateOutcomes {
		t.add[i] = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(labelOutcome.String(oc), labelTarget.String(target)))}
	}
	v, _ := u.targets.LoadOrStore(target, t)
	return v.(*updateTargetOpts)
}

// updateEvent records EventUpdate and reports whether e was one: a span
// event on the Work's span (the first maxUpdateEvents of the Work),
// agentwork_work_updates_total{target,outcome}, the size of an accepted
// update in agentwork_work_update_bytes{target}, the Work's counts for its
// span's and terminal log line's summary, and a log line.
func (o *Observer) updateEvent(ctx context.Context, e observe.Event) bool {
	if e.Type != observe.EventUpdate {
		return false
	}
	i := updateIndex(e.ErrorClass)
	if o.tracer != nil {
		o.updateSpan(ctx, e, i)
	} else {
		o.countUpdate(e.WorkID, i)
	}
	if o.u != nil {
		t := o.u.forTarget(e.Target)
		o.u.updates.Add(ctx, 1, t.add[i]...)
		if i == 0 {
			o.u.bytes.Record(ctx, int64(max(e.Bytes, 0)), t.rec...)
		}
	}
	o.logUpdate(ctx, e, i)
	return true
}

// countUpdate counts one update of outcome index i in the Work's tally
// and reports whether it may have a span event: not when the Work has
// maxUpdateEvents already, nor when there is no Work (a foreground call's
// child, whose updates are all refused: nothing would bound their
// events).
func (o *Observer) countUpdate(id string, i int) (event bool) {
	o.tally(id, func(t *workTally) {
		c := &t.updates
		if i == 0 {
			c.accepted = sat(c.accepted)
		} else {
			c.refused = sat(c.refused)
		}
		if c.recorded < maxUpdateEvents {
			c.recorded++
			event = true
		} else {
			c.unrecorded = sat(c.unrecorded)
		}
	})
	return event
}

// sat is n+1, saturating.
func sat(n uint32) uint32 {
	if n == ^uint32(0) {
		return n
	}
	return n + 1
}

// updateSpan counts the update and adds its span event to the span in
// ctx, unless the Work already has maxUpdateEvents of them: accepted,
// agentwork.update.seq, agentwork.update.bytes and
// agentwork.update.question; refused, error.type (the reason),
// agentwork.update.bytes when the engine gave the size, and
// agentwork.update.question.
func (o *Observer) updateSpan(ctx context.Context, e observe.Event, i int) {
	if !o.countUpdate(e.WorkID, i) {
		return
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	sc := getScratch()
	defer sc.put()
	attrs := sc.attributes()
	if i == 0 {
		attrs = append(attrs, keyUpdateSeq.Int(e.Seq), keyUpdateBytes.Int(e.Bytes))
	} else {
		attrs = append(attrs, keyErrorType.String(updateOutcomes[i]))
		if e.Bytes > 0 {
			attrs = append(attrs, keyUpdateBytes.Int(e.Bytes))
		}
	}
	attrs = append(attrs, keyUpdateQuestion.Bool(e.Question))
	opts := append(sc.event[:0], sc.withAttributes(attrs))
	if !e.Time.IsZero() {
		opts = append(opts, trace.WithTimestamp(e.Time))
	}
	span.AddEvent(evUpdate, opts...)
}

// updateSummary sets agentwork.work.updates and
// agentwork.work.updates.refused (and agentwork.work.updates.unrecorded
// when some updates got no span event) on a Work's span as it ends, when
// it reported updates.
func (o *Observer) updateSummary(span trace.Span, e observe.Event) {
	t, ok := o.tallyOf(e.WorkID)
	if !ok || !t.updates.any() {
		return
	}
	c := t.updates
	span.SetAttributes(keyUpdates.Int64(int64(c.accepted)), keyUpdatesRefused.Int64(int64(c.refused)))
	if c.unrecorded > 0 {
		span.SetAttributes(keyUpdatesUnrecorded.Int64(int64(c.unrecorded)))
	}
}

// logUpdate writes one line for an update, "agentwork.work.update": Info
// for an accepted question (the child waits for its supervisor), Debug
// otherwise. Fields: work.id, work.target, outcome (accepted or the
// refusal reason), update.seq (accepted), bytes, update.question,
// owner.depth, and the trace.
func (o *Observer) logUpdate(ctx context.Context, e observe.Event, i int) {
	level := slog.LevelDebug
	if i == 0 && e.Question {
		level = slog.LevelInfo
	}
	if !o.logs(ctx, level) {
		return
	}
	var buf [10]slog.Attr
	attrs := append(buf[:0], slog.String(logWorkID, e.WorkID), slog.String(logTarget, e.Target),
		slog.String(logOutcome, updateOutcomes[i]))
	if i == 0 {
		attrs = append(attrs, slog.Int(logUpdateSeq, e.Seq))
	}
	if e.Bytes > 0 {
		attrs = append(attrs, slog.Int(logBytes, e.Bytes))
	}
	attrs = append(attrs, slog.Bool(logUpdateQuestion, e.Question), slog.Int(logOwnerDepth, e.Depth))
	attrs = appendTrace(attrs, ctx)
	o.log.LogAttrs(ctx, level, evUpdate, attrs...)
}

// appendUpdates adds a Work's non-zero update counts to its terminal log
// line.
func (o *Observer) appendUpdates(attrs []slog.Attr, e observe.Event) []slog.Attr {
	if !e.To.Terminal() && e.Type != observe.EventOrphaned {
		return attrs
	}
	t, ok := o.tallyOf(e.WorkID)
	if !ok {
		return attrs
	}
	if c := t.updates; c.accepted > 0 {
		attrs = append(attrs, slog.Int64(logUpdatesAccepted, int64(c.accepted)))
	}
	if c := t.updates; c.refused > 0 {
		attrs = append(attrs, slog.Int64(logUpdatesRefused, int64(c.refused)))
	}
	return attrs
}
