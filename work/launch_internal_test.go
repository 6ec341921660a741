package work

import (
	"context"
	"runtime"
	"testing"
)

// TestChildStartsAfterUnlock: a Work dispatched in a critical section gets
// its child goroutine as the section's emission is delivered, after s.mu
// is released, not under the lock (go under the lock made its holders wait
// for the runtime, which may wake an idle P).
func TestChildStartsAfterUnlock(t *testing.T) {
	ctx := context.Background()
	s := New(WithMaxRunning(1), WithMaxStarts(0))
	defer s.Close(ctx)
	o := NewOwner("launch")
	target := Target{Label: "t", Kind: KindFunction}
	gate := make(chan struct{})
	if _, err := s.Start(ctx, Spec{Owner: o, Target: target,
		Run: func(context.Context) (string, error) { <-gate; return "", nil }}); err != nil {
		t.Fatal(err)
	}
	ref, err := s.Start(ctx, Spec{Owner: o, Target: target, Run: immediate("b")})
	if err != nil {
		t.Fatal(err)
	}
	// The second Work is queued behind the first; give it the slot by hand.
	s.mu.Lock()
	s.used--
	var e emission
	before := runtime.NumGoroutine()
	s.dispatchLocked(&e)
	during := runtime.NumGoroutine()
	s.used++ // the first Work still holds the slot taken from it
	s.unlockAndEmit(&e)
	if during > before {
		t.Errorf("the child's goroutine started under the Supervisor's lock (%d -> %d goroutines)", before, during)
	}
	if st, out, err := s.Result(ctx, o, ref.ID, MaxResultWait); err != nil || out != "b" {
		t.Fatalf("state %s, %q, %v", st.State, out, err)
	}
	close(gate)
}

func immediate(out string) RunFunc {
	return func(context.Context) (string, error) { return out, nil }
}
