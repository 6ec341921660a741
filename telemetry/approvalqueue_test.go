package telemetry_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
)

// TestOldestQueuedSkipsApproval: a Work awaiting approval is outside the
// dispatch queue, so it does not age the oldest-queued gauge; approved, it
// ages from its approval (LiveWork.Enqueued), not from its creation.
func TestOldestQueuedSkipsApproval(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(1))
	done := make(chan struct{})
	defer close(done)
	started := make(chan struct{}, 1)
	block := func(context.Context) (string, error) { started <- struct{}{}; <-done; return "", nil }
	if _, err := h.launch(context.Background(), researcher, work.Spec{Run: block}); err != nil {
		t.Fatal(err)
	}
	<-started
	held, err := h.launch(context.Background(), researcher, work.Spec{Run: block, NeedsApproval: true, Input: canaryText})
	if err != nil {
		t.Fatal(err)
	}
	gauge := func() string {
		for _, s := range series(h.collect()) {
			if strings.HasPrefix(s, "agentwork.work.oldest_queued_age{target=researcher}") {
				return s
			}
		}
		return "(none)"
	}
	h.clk.Advance(10 * time.Minute)
	if g := gauge(); g != "agentwork.work.oldest_queued_age{target=researcher} 0" {
		t.Fatalf("awaiting approval for 10m: %s; want 0", g)
	}
	if err := h.s.Approve(context.Background(), h.owner, held); err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(2 * time.Minute)
	if g := gauge(); g != "agentwork.work.oldest_queued_age{target=researcher} 120" {
		t.Fatalf("queued for 2m after 10m awaiting approval: %s; want 120", g)
	}
}
