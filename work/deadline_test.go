package work_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
)

// TestSystemClockDeadlines: on the system clock the running Works' deadlines
// share one timer; each Work still fails at its own deadline, in any start
// order, while Works with later deadlines (or settled ones) are unaffected,
// and a Work settling before its deadline is removed from the heap.
func TestSystemClockDeadlines(t *testing.T) {
	ctx := context.Background()
	s := work.New(work.WithMaxRunning(16))
	defer s.Close(ctx)
	o := work.NewOwner("deadlines")
	gate := make(chan struct{})
	blocked := func(ctx context.Context) (string, error) {
		select {
		case <-gate:
			return "late", nil
		case <-ctx.Done():
			return "", context.Cause(ctx)
		}
	}
	start := func(d time.Duration, run work.RunFunc) string {
		t.Helper()
		ref, err := s.Start(ctx, work.Spec{Owner: o, Target: agent, MaxDuration: d, Run: run})
		if err != nil {
			t.Fatal(err)
		}
		return ref.ID
	}
	// A long deadline first (the timer is armed for it), then shorter
	// ones that must re-arm it earlier, and Works that settle at once in
	// between (removed from the middle of the heap).
	long := start(time.Hour, blocked)
	quick := []string{start(time.Hour, immediate("a")), start(time.Minute, immediate("b"))}
	short := []string{start(60*time.Millisecond, blocked), start(20*time.Millisecond, blocked), start(40*time.Millisecond, blocked)}
	quick = append(quick, start(time.Hour, immediate("c")))
	for _, id := range quick {
		if st, _, err := s.Result(ctx, o, id, work.MaxResultWait); err != nil || st.State != work.StateCompleted {
			t.Fatalf("quick %s: %s, %v", id, st.State, err)
		}
	}
	for _, id := range short {
		st, _, err := s.Result(ctx, o, id, work.MaxResultWait)
		if err != nil || st.State != work.StateFailed {
			t.Fatalf("short %s: %s, %v; want failed", id, st.State, err)
		}
	}
	if st, err := s.Status(o, long); err != nil || st.State != work.StateRunning {
		t.Fatalf("long: %s, %v; want running", st.State, err)
	}
	close(gate)
	if st, out, err := s.Result(ctx, o, long, work.MaxResultWait); err != nil || st.State != work.StateCompleted || out != "late" {
		t.Fatalf("long: %s %q, %v", st.State, out, err)
	}
	// After every Work settled, a new short deadline still fires.
	id := start(10*time.Millisecond, func(ctx context.Context) (string, error) {
		<-ctx.Done()
		if !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			return "", errors.New("wrong cause")
		}
		return "", context.Cause(ctx)
	})
	if st, _, err := s.Result(ctx, o, id, work.MaxResultWait); err != nil || st.State != work.StateFailed {
		t.Fatalf("after: %s, %v; want failed", st.State, err)
	}
}
