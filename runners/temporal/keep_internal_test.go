package temporal

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work/driver"
)

// TestKeepAfterServerAnswers: a returned attempt's outcome is kept for a
// Rejoin a rejoin window (and a heartbeat timeout) after it returned,
// unless the server was lost meanwhile: then the Rejoin can only come
// once the server answers again, and the outcome is kept that long after
// it answers (the chaos run's server restart failed a Work worker_lost
// when the Rejoin came 2 s after its outcome was dropped, 33 s after its
// child returned while the server was down).
func TestKeepAfterServerAnswers(t *testing.T) {
	defer func(f time.Duration) { rejoinFloor = f }(rejoinFloor)
	rejoinFloor = 50 * time.Millisecond
	const hb = 20 * time.Millisecond // keep: 70 ms
	for _, tc := range []struct {
		name       string
		adrift     bool // the attempt is adrift when it returns
		lostLater  bool // another attempt goes adrift after it returned
		wantGated  bool // kept until a window after the server answers
		downChecks int32
	}{
		{name: "server up", wantGated: false},
		{name: "adrift", adrift: true, wantGated: true, downChecks: 2},
		{name: "lost after the return", lostLater: true, wantGated: true, downChecks: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &Worker{cfg: config{heartbeatTimeout: hb}}
			defer w.adrift.Wait()
			defer w.adrift.Stop()
			a := &heldAttempt{HeldAttempt: driver.NewHeldAttempt[runOutcome]("w", 1, func(error) {})}
			if !tc.adrift {
				ctx := context.Background()
				a.hb.Store(&ctx)
			}
			w.held.Put(heldKey("w", 1), a)
			var up atomic.Bool
			var checks atomic.Int32
			checked := make(chan struct{}, 100)
			answers := func() bool {
				checks.Add(1)
				checked <- struct{}{}
				return up.Load()
			}
			a.Finish(runOutcome{})
			w.keep(a, answers)
			if tc.lostLater {
				w.lostAt.Store(time.Now().UnixNano())
			}
			if tc.wantGated {
				// The keep window passes while the server is down: the
				// watch checks it (each check after the window) and the
				// outcome stays.
				for range tc.downChecks {
					select {
					case <-checked:
					case <-time.After(10 * time.Second):
						t.Fatal("the server was never checked: the outcome is not kept for it")
					}
				}
				if _, ok := w.held.Get(heldKey("w", 1)); !ok {
					t.Fatal("the outcome was dropped while the server did not answer")
				}
				up.Store(true)
			}
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) { // polling the timer's effect
				if _, ok := w.held.Get(heldKey("w", 1)); !ok {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the outcome was kept for good")
				}
			}
			if !tc.wantGated && checks.Load() != 0 {
				t.Fatalf("the server was checked %d times for an attempt that returned while it answered", checks.Load())
			}
		})
	}
}
