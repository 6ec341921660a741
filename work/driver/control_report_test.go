package driver

import (
	"context"
	"sync"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// events records the events an Observer is given.
type events struct {
	observe.NopObserver
	mu  sync.Mutex
	evs []observe.Event
}

func (o *events) Event(_ context.Context, e observe.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.evs = append(o.evs, e)
}

// TestReportUpdates: a Spec that declares no updates refuses each without
// a call, with its event; a refusal decided in the attempt has its event
// here; the Work's own decisions (a receipt, its refusals) have none
// here.
func TestReportUpdates(t *testing.T) {
	a := Attempt{ID: "w1", Owner: "o", Label: "child", Kind: work.KindAgent}
	for _, tc := range []struct {
		name     string
		declared bool
		rec      work.UpdateReceipt
		reason   string
		here     bool
		calls    int
		event    string // the ErrorClass of the one event reported here; "-": none
	}{
		{"not declared", false, work.UpdateReceipt{}, observe.UpdateRefusedNotDeclared, false, 0, observe.UpdateRefusedNotDeclared},
		{"accepted", true, work.UpdateReceipt{Seq: 2}, "", false, 1, "-"},
		{"refused by the Work", true, work.UpdateReceipt{}, observe.UpdateRefusedEnding, false, 1, "-"},
		{"refused here", true, work.UpdateReceipt{}, observe.UpdateRefusedUnavailable, true, 1, observe.UpdateRefusedUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs := &events{}
			calls := 0
			update := ReportUpdates(obs, a, tc.declared, func(key string, value []byte, question bool) (work.UpdateReceipt, string, bool) {
				calls++
				if key != "k" || string(value) != `"v"` || !question {
					t.Fatalf("report(%q, %s, %v)", key, value, question)
				}
				return tc.rec, tc.reason, tc.here
			})
			rec, reason := update("k", []byte(`"v"`), true)
			if rec != tc.rec || reason != tc.reason || calls != tc.calls {
				t.Fatalf("= %+v %q after %d calls, want %+v %q after %d", rec, reason, calls, tc.rec, tc.reason, tc.calls)
			}
			switch {
			case tc.event == "-" && len(obs.evs) != 0:
				t.Fatalf("events %+v, want none", obs.evs)
			case tc.event != "-" && (len(obs.evs) != 1 || obs.evs[0].Type != observe.EventUpdate || obs.evs[0].ErrorClass != tc.event ||
				obs.evs[0].WorkID != "w1" || obs.evs[0].Bytes != 3 || !obs.evs[0].Question):
				t.Fatalf("events %+v, want one update event, class %s", obs.evs, tc.event)
			}
		})
	}
	// A nil report: refused as unavailable, with its event, never a panic.
	obs := &events{}
	if rec, reason := ReportUpdates(obs, a, true, nil)("k", []byte(`"v"`), false); rec != (work.UpdateReceipt{}) || reason != observe.UpdateRefusedUnavailable ||
		len(obs.evs) != 1 || obs.evs[0].ErrorClass != observe.UpdateRefusedUnavailable {
		t.Fatalf("nil report: %+v %q, events %+v; want refused unavailable with its event", rec, reason, obs.evs)
	}
}
