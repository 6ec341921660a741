package observe

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

// ShutdownCount is a number of Works of one target in one state, as a
// ShutdownReport counts them.
type ShutdownCount struct {
	Target string // the target label
	State  State
	Count  int
}

// ShutdownReport says what an engine's Shutdown did (work's
// Engine.Shutdown), in counts only: no id, owner, output or failure text.
type ShutdownReport struct {
	// Drained reports that every Work finished before the context ended,
	// so nothing was cancelled.
	Drained bool
	// Duration is how long Shutdown took, by the engine's clock.
	Duration time.Duration
	// Settled counts the Works that were queued or running when Shutdown
	// began (or were accepted during it) and reached a terminal state, by
	// target and final state.
	Settled []ShutdownCount
	// Orphaned counts the Works, and foreground calls (state running),
	// whose children had not returned a grace period after cancellation,
	// by target and the state they were left in. Their goroutines end when
	// the children return; nothing waits for them.
	Orphaned []ShutdownCount
}

// OrphanCount returns the number of orphans.
func (r ShutdownReport) OrphanCount() int {
	n := 0
	for _, c := range r.Orphaned {
		n += c.Count
	}
	return n
}

// String renders the report on one line, for example
// "drained=false duration=2s settled=[research/completed=2 fetch/cancelled=1] orphaned=[fetch/cancel-requested=1]".
func (r ShutdownReport) String() string {
	var b strings.Builder
	b.WriteString("drained=" + strconv.FormatBool(r.Drained) + " duration=" + r.Duration.String())
	for _, part := range [...]struct {
		name string
		cs   []ShutdownCount
	}{{"settled", r.Settled}, {"orphaned", r.Orphaned}} {
		b.WriteString(" " + part.name + "=[")
		for i, c := range part.cs {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(c.Target + "/" + string(c.State) + "=" + strconv.Itoa(c.Count))
		}
		b.WriteByte(']')
	}
	return b.String()
}

// LogValue makes the report a log/slog group: drained, duration, orphans
// (the total) and one "target/state" count per entry under settled and
// orphaned.
func (r ShutdownReport) LogValue() slog.Value {
	group := func(cs []ShutdownCount) slog.Value {
		attrs := make([]slog.Attr, len(cs))
		for i, c := range cs {
			attrs[i] = slog.Int(c.Target+"/"+string(c.State), c.Count)
		}
		return slog.GroupValue(attrs...)
	}
	return slog.GroupValue(
		slog.Bool("drained", r.Drained),
		slog.Duration("duration", r.Duration),
		slog.Int("orphans", r.OrphanCount()),
		slog.Attr{Key: "settled", Value: group(r.Settled)},
		slog.Attr{Key: "orphaned", Value: group(r.Orphaned)},
	)
}

// ShutdownObserver is implemented by an Observer that records an engine's
// Shutdown report (the telemetry package's logs it through log/slog).
// Every engine's Shutdown (work's Engine.Shutdown, in-process or durable)
// calls ShutdownReported once, as it returns, with a context that carries
// the values of Shutdown's context but not its cancellation; a Shutdown
// refused before it changed anything (work.ErrCloseFromChild,
// work.ErrNotInitialized) reports nothing. The report is content-free:
// target labels, states and counts.
type ShutdownObserver interface {
	ShutdownReported(ctx context.Context, r ShutdownReport)
}
