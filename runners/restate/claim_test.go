package restate

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/restate/restatetest"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// A retried step whose attempt another process started (and holds, or
// held and died) does not wait for one of the target's slots: they may
// all be held by attempts adrift of their steps, and the rejoin window
// would close while it waited (the chaos run's worker_lost after a server
// restart, two service processes with one slot each). Its claim answers
// Busy within busyJitter (a random pause), so that Restate runs the step
// again until it reaches the Worker holding the attempt. A queued Work's step still waits for its
// slot, and claims nothing while it waits.
func TestClaimWithoutASlotWhenStartedElsewhere(t *testing.T) {
	srv, err := restatetest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w, err := NewWorker(map[string]Child{"gated": {Kind: work.KindFunction, Run: func(_ context.Context, in string) (string, error) { return in, nil }}},
		WithServicePrefix("claim"), WithIngress(srv.Ingress), WithAdmin(srv.Admin), WithRegistry(), WithOptions(work.WithMaxRunning(1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	w.slots["gated"] <- struct{}{} // the one slot, held by an attempt adrift
	defer func() { <-w.slots["gated"] }()
	newWork := func() workInput {
		in := workInput{ID: driver.NewID(), Owner: "claim-owner", Label: "gated", Kind: work.KindFunction, Created: time.Now(), MaxAttempts: 1}
		if err := w.in.object(ctx, controlService, in.ID, hInit, driver.NewID(), in, nil); err != nil {
			t.Fatal(err)
		}
		return in
	}
	held := newWork()
	var first claimReply // the claim of the process holding the attempt
	if err := w.in.object(ctx, controlService, held.ID, hClaim, driver.NewID(), nil, &first); err != nil || !first.Run {
		t.Fatalf("first claim: %+v, %v", first, err)
	}
	rc, stop := context.WithTimeout(ctx, 30*time.Second)
	_, err = w.attempt(rc, held, nil)
	stop()
	if !errors.Is(err, errBusy) {
		t.Fatalf("a retried step of an attempt started elsewhere, every slot taken: %v, want %v within busyJitter", err, errBusy)
	}

	queued := newWork()
	rc, stop = context.WithTimeout(ctx, 2*time.Second)
	_, err = w.attempt(rc, queued, nil)
	stop()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a queued Work's step with every slot taken: %v, want it to wait for a slot", err)
	}
	var v controlView
	if err := w.in.object(ctx, controlService, queued.ID, hPeek, "", nil, &v); err != nil || v.State != work.StateQueued || v.Attempt != 0 {
		t.Fatalf("the queued Work after its step waited: %+v, %v, want queued, no attempt", v, err)
	}
}
