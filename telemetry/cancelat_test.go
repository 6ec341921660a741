package telemetry_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
)

// A Work whose cancel request this Observer saw but whose terminal event
// another process reports (a durable runner's workflow moved to another
// worker) leaves no cancel-request time behind: the next collection
// forgets times of Work no watched Supervisor holds cancel-requested,
// and keeps those of Work one does.
func TestCancelRequestTimesOfForeignWorkAreForgotten(t *testing.T) {
	h := newHarness(t)
	foreign := work.Event{Type: work.EventCancelRequested, WorkID: "0123456789abcdef0123456789abcdef", Owner: "elsewhere",
		Target: "researcher", Kind: work.KindAgent, From: work.StateRunning, To: work.StateCancelRequested, Time: epoch}
	h.obs.Event(context.Background(), foreign)

	started, release := make(chan struct{}), make(chan struct{})
	ref, err := h.s.Start(context.Background(), work.Spec{Owner: h.owner, Target: work.Target{Label: "block", Kind: work.KindAgent},
		Run: func(ctx context.Context) (string, error) {
			close(started)
			<-release // stays cancel-requested until the test ends
			return "", ctx.Err()
		}})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	defer close(release)
	h.clk.Advance(time.Second)
	if r, err := h.s.Cancel(t.Context(), h.owner, ref.ID); err != nil || !r.Accepted {
		t.Fatalf("cancel: %+v %v", r, err)
	}
	if n := telemetry.CancelEntries(h.obs); n != 2 {
		t.Fatalf("%d cancel-request times before collection, want 2", n)
	}
	h.collect()
	if n := telemetry.CancelEntries(h.obs); n != 1 {
		t.Errorf("%d cancel-request times after collection, want 1 (the watched Supervisor's Work)", n)
	}
	_ = h.obs.Status()
	if n := telemetry.CancelEntries(h.obs); n != 1 {
		t.Errorf("%d cancel-request times after the status page, want 1", n)
	}
}
