package driver

import (
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestTransitionRevisions: the registry (Registry.Transition) applies a Work's transition only
// over an older revision, so the started record (sent by the attempt's
// worker) that arrives after a later one moves nothing back, and a
// repeated record changes nothing.
func TestTransitionRevisions(t *testing.T) {
	g := &Registry{Records: []Record{{ID: "w", State: work.StateQueued}}}
	rec := func() Record { return g.Records[0] }
	g.Transition(Record{ID: "w", Rev: 2, State: work.StateCancelRequested, Attempt: 1})
	if r := rec(); r.State != work.StateCancelRequested || r.Rev != 2 {
		t.Fatalf("after rev 2: %v rev %d", r.State, r.Rev)
	}
	g.Transition(Record{ID: "w", Rev: 1, State: work.StateRunning, Attempt: 1})
	if r := rec(); r.State != work.StateCancelRequested || r.Rev != 2 {
		t.Fatalf("a late rev 1 moved the record: %v rev %d", r.State, r.Rev)
	}
	g.Transition(Record{ID: "w", Rev: 2, State: work.StateRunning, Attempt: 1})
	if r := rec(); r.State != work.StateCancelRequested {
		t.Fatalf("a repeated rev 2 applied: %v", r.State)
	}
	g.Transition(Record{ID: "w", Rev: 3, State: work.StateCancelled, Attempt: 1, Spent: &observe.Usage{}})
	if r := rec(); r.State != work.StateCancelled || r.Rev != 3 {
		t.Fatalf("after rev 3: %v rev %d", r.State, r.Rev)
	}
}
