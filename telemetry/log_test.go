package telemetry_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestLogLines: one JSON line per lifecycle event, Debug except failures
// (deadline included), which are Warn, with the documented fields.
func TestLogLines(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	done, err := h.launch(ctx, researcher, work.Spec{Run: func(ctx context.Context) (string, error) { return "ok", nil }})
	if err != nil {
		t.Fatal(err)
	}
	h.await(done, work.StateCompleted)
	failed, err := h.launch(ctx, summarizer, work.Spec{Run: func(ctx context.Context) (string, error) { return "", errors.New("x") }})
	if err != nil {
		t.Fatal(err)
	}
	h.await(failed, work.StateFailed)
	late, err := h.launch(ctx, researcher, work.Spec{Budget: work.Budget{MaxDuration: time.Minute}, Run: func(ctx context.Context) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}})
	if err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(time.Minute)
	h.await(late, work.StateFailed)

	events := h.rec.Events()
	lines := strings.Split(strings.TrimSpace(h.logs.String()), "\n")
	if len(lines) != len(events) {
		t.Fatalf("%d log lines for %d events:\n%s", len(lines), len(events), h.logs)
	}
	for i, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("line %d: %v: %s", i, err, line)
		}
		e := events[i]
		wantLevel, wantMsg := "DEBUG", wantEventNames[e.Type]
		if e.Type == observe.EventFailed || e.Type == observe.EventBudgetExhausted {
			wantLevel = "WARN"
		}
		if rec["level"] != wantLevel || rec["msg"] != wantMsg {
			t.Errorf("line %d: level %v msg %v, want %s %q", i, rec["level"], rec["msg"], wantLevel, wantMsg)
		}
		if rec["work.id"] != e.WorkID || rec["work.target"] != e.Target {
			t.Errorf("line %d: ids %v %v, want %s %s", i, rec["work.id"], rec["work.target"], e.WorkID, e.Target)
		}
		keys := slices.Sorted(maps.Keys(rec))
		var want []string
		switch e.Type {
		case observe.EventQueued:
			want = []string{"level", "msg", "owner.depth", "span_id", "time", "trace_id", "work.id", "work.state", "work.target"}
		case observe.EventRunning:
			want = []string{"from", "level", "msg", "owner.depth", "queue_wait", "span_id", "time", "trace_id", "work.id", "work.state", "work.target"}
		case observe.EventCompleted:
			want = []string{"bytes", "duration", "from", "level", "msg", "owner.depth", "span_id", "time", "trace_id", "work.id", "work.state", "work.target"}
		case observe.EventFailed:
			want = []string{"duration", "error.type", "from", "level", "msg", "owner.depth", "span_id", "time", "trace_id", "work.id", "work.state", "work.target"}
		case observe.EventResultRead:
			want = []string{"bytes", "level", "msg", "owner.depth", "span_id", "time", "trace_id", "work.id", "work.target"}
		case observe.EventBudgetExhausted:
			want = []string{"budget", "level", "msg", "owner.depth", "span_id", "time", "trace_id", "work.id", "work.target"}
			if rec["budget"] != observe.BudgetDuration {
				t.Errorf("line %d: budget %v, want duration", i, rec["budget"])
			}
		}
		if !slices.Equal(keys, want) {
			t.Errorf("line %d (%s) keys %q, want %q", i, e.Type, keys, want)
		}
		tid, _ := rec["trace_id"].(string)
		sid, _ := rec["span_id"].(string)
		if !hexID.MatchString(tid) || len(tid) != 32 || !hexID.MatchString(sid) || len(sid) != 16 {
			t.Errorf("line %d: trace_id %q span_id %q, want the active span's ids", i, tid, sid)
		}
	}
	var classes []any
	for _, line := range lines {
		var rec map[string]any
		_ = json.Unmarshal([]byte(line), &rec)
		if et, ok := rec["error.type"]; ok {
			classes = append(classes, et)
		}
	}
	if len(classes) != 2 || classes[0] != "error" || classes[1] != "deadline_exceeded" {
		t.Errorf("error.type fields %v, want [error deadline_exceeded]", classes)
	}
	if !strings.Contains(h.logs.String(), `"duration":60000000000`) {
		t.Errorf("no one-minute duration on the deadline line:\n%s", h.logs)
	}
}

var hexID = regexp.MustCompile(`^[0-9a-f]+$`)

// wantEventNames pins the span event names (and log messages) of the
// lifecycle events: public API (DESIGN.md, Telemetry contract).
var wantEventNames = map[observe.EventType]string{
	observe.EventQueued:            "agentwork.work.queued",
	observe.EventRunning:           "agentwork.work.running",
	observe.EventCancelRequested:   "agentwork.work.cancel_requested",
	observe.EventCompleted:         "agentwork.work.completed",
	observe.EventFailed:            "agentwork.work.failed",
	observe.EventCancelled:         "agentwork.work.cancelled",
	observe.EventDetached:          "agentwork.work.detached",
	observe.EventGuidanceAccepted:  "agentwork.work.guidance.accepted",
	observe.EventGuidanceDelivered: "agentwork.work.guidance.delivered",
	observe.EventGuidanceDropped:   "agentwork.work.guidance.dropped",
	observe.EventResultRead:        "agentwork.work.result.read",
	observe.EventBudgetExhausted:   "agentwork.work.budget_exhausted",
}
