package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// updateCanary is planted in update values and questions (and, in the
// synthetic tests, in the one string an EventUpdate carries that an
// engine could misuse: its ErrorClass).
const updateCanary = "CANARY-update-b0a7-do-not-export"

// updateMarks are the update canary's.
var updateMarks = canaryMarks{updateCanary, "update-b0a7"}

func accepted(seq, bytes int, question bool) func(*observe.Event) {
	return func(e *observe.Event) { e.Seq, e.Bytes, e.Question = seq, bytes, question }
}

func refused(reason string, bytes int) func(*observe.Event) {
	return func(e *observe.Event) { e.ErrorClass, e.Bytes = reason, bytes }
}

const (
	talkerID  = "0123456789abcdef0123456789abcd01"
	chattyID  = "0123456789abcdef0123456789abcd02"
	silentID  = "0123456789abcdef0123456789abcd03"
	replayID  = "0123456789abcdef0123456789abcd04"
	orphanUID = "0123456789abcdef0123456789abcd05"
)

// TestUpdateSpanEvents: each update is one agentwork.work.update span
// event with its sequence, size and question flag (a refusal: its reason
// as error.type), at most 32 per Work and the rest counted; the span gets
// the totals as it ends; the counter counts by target and outcome (a
// reason that is not one is _OTHER) and the histogram the accepted sizes.
func TestUpdateSpanEvents(t *testing.T) {
	h := newHarness(t)
	caller, root := h.root()
	defer root.End()

	talker := newWaitEvents(talkerID, "researcher")
	q := talker.next(observe.EventQueued)
	ctx := h.obs.Bind(caller, context.Background(), q)
	for _, e := range []observe.Event{q, talker.next(observe.EventRunning),
		talker.next(observe.EventUpdate, accepted(1, 40, false)),
		talker.next(observe.EventUpdate, accepted(2, 120, true)),
		talker.next(observe.EventUpdate, refused(observe.UpdateRefusedBytes, 20000)),
		talker.next(observe.EventUpdate, refused(observe.UpdateRefusedNotDeclared, 0)),
		talker.next(observe.EventUpdate, refused("free text "+updateCanary, 7)),
		talker.next(observe.EventCompleted, func(e *observe.Event) { e.Bytes = 5 })} {
		h.obs.Event(ctx, e)
	}

	// 40 updates (a policy above the default) and 3 refusals: 32 events.
	chatty := newWaitEvents(chattyID, "summarizer")
	q = chatty.next(observe.EventQueued)
	cctx := h.obs.Bind(caller, context.Background(), q)
	h.obs.Event(cctx, q)
	h.obs.Event(cctx, chatty.next(observe.EventRunning))
	for i := 1; i <= 40; i++ {
		h.obs.Event(cctx, chatty.next(observe.EventUpdate, accepted(i, 10, false)))
	}
	for range 3 {
		h.obs.Event(cctx, chatty.next(observe.EventUpdate, refused(observe.UpdateRefusedCount, 10)))
	}
	h.obs.Event(cctx, chatty.next(observe.EventFailed, func(e *observe.Event) { e.ErrorClass = work.ClassError }))

	// No update: no update attributes.
	silent := newWaitEvents(silentID, "researcher")
	q = silent.next(observe.EventQueued)
	sctx := h.obs.Bind(caller, context.Background(), q)
	for _, e := range []observe.Event{q, silent.next(observe.EventRunning), silent.next(observe.EventCompleted)} {
		h.obs.Event(sctx, e)
	}

	got := renderSpans(h.spans.Ended())
	want := `invoke_agent researcher kind=internal parent=root trace=t1 links=[] status=Unset
  attrs {agentwork.work.id=<id> agentwork.work.state=completed agentwork.work.target=researcher agentwork.work.updates.refused=3 agentwork.work.updates=2 gen_ai.agent.name=researcher gen_ai.operation.name=invoke_agent}
  event agentwork.work.queued {agentwork.work.state=queued}
  event agentwork.work.running {agentwork.work.state=running}
  event agentwork.work.update {agentwork.update.bytes=40 agentwork.update.question=false agentwork.update.seq=1}
  event agentwork.work.update {agentwork.update.bytes=120 agentwork.update.question=true agentwork.update.seq=2}
  event agentwork.work.update {agentwork.update.bytes=20000 agentwork.update.question=false error.type=bytes}
  event agentwork.work.update {agentwork.update.question=false error.type=not_declared}
  event agentwork.work.update {agentwork.update.bytes=7 agentwork.update.question=false error.type=_OTHER}
  event agentwork.work.completed {agentwork.result.bytes=5 agentwork.work.state=completed}
`
	if !strings.HasPrefix(got, want) {
		t.Errorf("talker's span:\n got %s\nwant %s", got, want)
	}
	chattySpan := ""
	for _, b := range strings.Split(got, "invoke_agent ") {
		if strings.HasPrefix(b, "summarizer") {
			chattySpan = b
		}
	}
	if n := strings.Count(chattySpan, "event agentwork.work.update "); n != 32 {
		t.Errorf("chatty Work has %d update events, want 32:\n%s", n, chattySpan)
	}
	for _, w := range []string{"agentwork.work.updates.refused=3 agentwork.work.updates.unrecorded=11 agentwork.work.updates=40 ",
		"agentwork.update.seq=32}\n  event agentwork.work.failed"} {
		if !strings.Contains(chattySpan, w) {
			t.Errorf("chatty Work's span lacks %q:\n%s", w, chattySpan)
		}
	}
	if !strings.Contains(got, "trace=t2 links=[] status=Unset\n  attrs {agentwork.work.id=<id> agentwork.work.state=completed agentwork.work.target=researcher gen_ai") {
		t.Errorf("a Work without updates has update attributes:\n%s", got)
	}
	if n := telemetry.PollEntries(h.obs); n != 0 {
		t.Errorf("%d tally entries kept after the Works ended", n)
	}

	var metrics []string
	for _, s := range series(h.collect()) {
		if strings.HasPrefix(s, "agentwork.work.update") {
			metrics = append(metrics, s)
		}
	}
	diff(t, "update metrics", strings.Join(metrics, "\n"), strings.Join([]string{
		"agentwork.work.updates{outcome=_OTHER,target=researcher} 1",
		"agentwork.work.updates{outcome=accepted,target=researcher} 2",
		"agentwork.work.updates{outcome=accepted,target=summarizer} 40",
		"agentwork.work.updates{outcome=bytes,target=researcher} 1",
		"agentwork.work.updates{outcome=count,target=summarizer} 3",
		"agentwork.work.updates{outcome=not_declared,target=researcher} 1",
		"agentwork.work.update{target=researcher} count=2 sum=160",
		"agentwork.work.update{target=summarizer} count=40 sum=400",
	}, "\n"))
	updateMarks.check(t, h)
}

// TestUpdateReplay: a durable runner's replay adds the span events and
// the totals, and records no metric and no log line.
func TestUpdateReplay(t *testing.T) {
	h := newHarness(t)
	w := newWaitEvents(replayID, "researcher")
	q := w.next(observe.EventQueued)
	ctx := h.obs.Bind(context.Background(), context.Background(), q)
	for _, e := range []observe.Event{q, w.next(observe.EventRunning), w.next(observe.EventUpdate, accepted(1, 30, true)),
		w.next(observe.EventUpdate, refused(observe.UpdateRefusedEnding, 0)), w.next(observe.EventCancelled)} {
		h.obs.Replay(ctx, e)
	}
	got := renderSpans(h.spans.Ended())
	for _, want := range []string{
		"event agentwork.work.update {agentwork.update.bytes=30 agentwork.update.question=true agentwork.update.seq=1}\n  event agentwork.work.update {agentwork.update.question=false error.type=ending}\n  event agentwork.work.cancelled",
		"agentwork.work.updates.refused=1 agentwork.work.updates=1 "} {
		if !strings.Contains(got, want) {
			t.Errorf("replayed span lacks %q:\n%s", want, got)
		}
	}
	for _, s := range series(h.collect()) {
		if strings.HasPrefix(s, "agentwork.work.update") {
			t.Errorf("replay counted an update: %s", s)
		}
	}
	if logs := h.logs.String(); logs != "" {
		t.Errorf("replay logged:\n%s", logs)
	}
	if n := telemetry.PollEntries(h.obs); n != 0 {
		t.Errorf("%d tally entries kept", n)
	}
}

// TestUpdateLogLines: an accepted update is a Debug line, a question an
// Info line, a refusal a Debug line with its reason as outcome; the
// terminal line (and an orphan's) carries the Work's update counts.
func TestUpdateLogLines(t *testing.T) {
	h := newHarness(t)
	w := newWaitEvents(talkerID, "researcher")
	for _, e := range []observe.Event{w.next(observe.EventQueued), w.next(observe.EventRunning),
		w.next(observe.EventUpdate, accepted(1, 40, false)), w.next(observe.EventUpdate, accepted(2, 60, true)),
		w.next(observe.EventUpdate, refused(observe.UpdateRefusedConflict, 9)),
		w.next(observe.EventCompleted)} {
		h.obs.Event(context.Background(), e)
	}
	o := newWaitEvents(orphanUID, "summarizer")
	for _, e := range []observe.Event{o.next(observe.EventQueued), o.next(observe.EventRunning),
		o.next(observe.EventUpdate, refused(observe.UpdateRefusedInvalid, 0)),
		o.next(observe.EventOrphaned, func(e *observe.Event) { e.From, e.ErrorClass = work.StateRunning, work.ClassOrphaned })} {
		h.obs.Event(context.Background(), e)
	}
	type line struct {
		Level, Msg string
		ID         string `json:"work.id"`
		Outcome    string
		Seq        *int  `json:"update.seq"`
		Bytes      int   `json:"bytes"`
		Question   *bool `json:"update.question"`
		Accepted   int   `json:"updates.accepted"`
		Refused    int   `json:"updates.refused"`
	}
	var got []string
	for _, raw := range strings.Split(strings.TrimSpace(h.logs.String()), "\n") {
		var l line
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		if l.Msg != "agentwork.work.update" && l.Accepted == 0 && l.Refused == 0 {
			continue
		}
		s := fmt.Sprintf("%s %s %s outcome=%s bytes=%d", l.Level, l.Msg, l.ID[len(l.ID)-2:], l.Outcome, l.Bytes)
		if l.Seq != nil {
			s += fmt.Sprintf(" seq=%d", *l.Seq)
		}
		if l.Question != nil {
			s += fmt.Sprintf(" question=%v", *l.Question)
		}
		if l.Accepted+l.Refused > 0 {
			s += fmt.Sprintf(" accepted=%d refused=%d", l.Accepted, l.Refused)
		}
		got = append(got, s)
	}
	diff(t, "log lines", strings.Join(got, "\n"), strings.Join([]string{
		"DEBUG agentwork.work.update 01 outcome=accepted bytes=40 seq=1 question=false",
		"INFO agentwork.work.update 01 outcome=accepted bytes=60 seq=2 question=true",
		"DEBUG agentwork.work.update 01 outcome=conflict bytes=9 question=false",
		"DEBUG agentwork.work.completed 01 outcome= bytes=0 accepted=2 refused=1",
		"DEBUG agentwork.work.update 05 outcome=invalid bytes=0 question=false",
		"WARN agentwork.work.orphaned 05 outcome= bytes=0 accepted=0 refused=1",
	}, "\n"))
}

// TestUpdateZeroObserver: the zero Observer takes an update without a
// panic and records nothing.
func TestUpdateZeroObserver(t *testing.T) {
	var o telemetry.Observer
	o.Event(context.Background(), observe.Event{Type: observe.EventUpdate, WorkID: talkerID, Seq: 1, Bytes: 3})
	o.Replay(context.Background(), observe.Event{Type: observe.EventUpdate, WorkID: talkerID, Seq: 1, Bytes: 3})
	if n := telemetry.PollEntries(&o); n != 0 {
		t.Errorf("the zero Observer keeps %d tally entries", n)
	}
}
