package middleware

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// StatusUnavailable is the status block while the engine cannot read the
// owner's rows (its service is away): one line that says so, never an
// empty block (which would say there is no Work) nor rows read before.
const StatusUnavailable = "[background work] status unavailable: the engine did not answer; background work is not shown now (check it later with the work tool)"

// StatusBlock renders the owner's boundary status block, to be appended
// after the cacheable prefix of the owner's next model request (never as a
// system message, never cached). It returns "" when the owner has no
// visible Work, and StatusUnavailable when the engine cannot read the
// rows (an error of work/boundary's Rows, which ctx bounds: a durable
// engine's service is away). The format is exactly:
//
//	[background work] id | target | state | elapsed | result
//	<id> | <target label> | <state> | <elapsed> | <available|none>
//	...
//	and N more
//	(read results with the work tool's result action; status never includes output)
//
// with at most 12 rows in the engine's priority order (work/boundary's Rows),
// elapsed rounded to the second in Go's form (for example 1m5s), and the
// "and N more" line only when rows were left out. It contains nothing but
// ids, labels, states, elapsed times and result availability. Each call
// reports its row count to the Observer (EventStatusBlock). A released
// Kit's block is always "" (its Work is no longer visible to it); a nil
// ctx is taken as context.Background().
func (s *Kit) StatusBlock(ctx context.Context) string {
	block, _ := s.StatusBlockRows(ctx)
	return block
}

// StatusBlockRows is StatusBlock that also returns the rows the block
// shows. A block rendered while RunUntilSettled runs counts as shown to
// the coordinator: a failure among its rows is not announced again.
func (s *Kit) StatusBlockRows(ctx context.Context) (string, []observe.Row) {
	if s == nil || s.sup == nil || s.released.Load() {
		return "", nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	rows, more, err := boundary.Rows(ctx, s.sup, s.owner)
	if err != nil {
		// Neither an empty block (no Work) nor rows read before.
		return StatusUnavailable, nil
	}
	if len(rows) == 0 {
		return "", nil
	}
	var b strings.Builder
	b.WriteString("[background work] id | target | state | elapsed | result\n")
	for _, r := range rows {
		result := "none"
		if r.ResultAvailable {
			result = "available"
		}
		fmt.Fprintf(&b, "%s | %s | %s | %s | %s\n", r.ID, r.TargetLabel, r.State, r.Elapsed.Round(time.Second), result)
	}
	if more > 0 {
		fmt.Fprintf(&b, "and %d more\n", more)
	}
	b.WriteString("(read results with the work tool's result action; status never includes output)")
	s.obs.Event(ctx, observe.Event{Type: observe.EventStatusBlock, Owner: s.owner.ID(), Depth: s.owner.Depth(),
		Time: boundary.Now(s.sup), Count: len(rows)})
	s.shown(rows)
	return b.String(), rows
}

// Guidance drains the guidance queued for the child running in ctx and
// frames it so the child reads it as supervisor guidance. An adapter calls
// it at each of the child's model-request boundaries, before the request is
// sealed, and adds the text as a new user message; it is never injected
// into an active call. It returns "" when there is none (or ctx is not a
// child's, or nil). Delivery is reported to the Observer by the engine.
//
// The format is exactly:
//
//	[supervisor guidance] Your supervisor sent guidance while you work. Follow it within your task:
//	1. <message>
//	2. <message>
func Guidance(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	ex, ok := work.ExecutionFrom(ctx)
	if !ok {
		return ""
	}
	msgs := boundary.Guidance(ex)
	if len(msgs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("[supervisor guidance] Your supervisor sent guidance while you work. Follow it within your task:")
	for i, m := range msgs {
		fmt.Fprintf(&b, "\n%d. %s", i+1, m)
	}
	return b.String()
}
