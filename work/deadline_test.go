package work_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"
	"weak"

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
		ref, err := s.Start(ctx, work.Spec{Owner: o, Target: agent, Budget: work.Budget{MaxDuration: d}, Run: run})
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
	if st, err := s.Status(ctx, o, long); err != nil || st.State != work.StateRunning {
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

// Many Works on the system clock with deadlines in decreasing (and random)
// order, some ending early, some cancelled, on a pool smaller than the
// number of Works (so some start from a settling child's goroutine): every
// Work whose child waits is cancelled by its deadline no earlier than it,
// and none that ended early is failed by a deadline.
func TestSystemDeadlinesStress(t *testing.T) {
	ctx := context.Background()
	s := work.New(work.WithMaxRunning(6), work.WithMaxOutstanding(100), work.WithMaxStarts(0), work.WithRetention(100, 0))
	defer s.Close(ctx)
	o := work.NewOwner("stress")
	type rec struct {
		d      time.Duration
		kind   int // 0 waits for its deadline, 1 ends early, 2 is cancelled
		cancel time.Time
		cause  error
	}
	const n = 60
	recs := make([]*rec, n)
	ids := make([]string, n)
	var mu sync.Mutex
	for i := range n {
		r := &rec{d: time.Duration(n-i)*time.Millisecond + time.Duration(rand.IntN(5))*time.Millisecond, kind: rand.IntN(3)}
		if i%7 == 0 {
			r.kind = 0
		}
		recs[i] = r
		ref, err := s.Start(ctx, work.Spec{Owner: o, Target: agent, Budget: work.Budget{MaxDuration: r.d}, Run: func(ctx context.Context) (string, error) {
			switch r.kind {
			case 1:
				return "early", nil
			}
			<-ctx.Done()
			mu.Lock()
			r.cancel, r.cause = time.Now(), context.Cause(ctx)
			mu.Unlock()
			return "", ctx.Err()
		}})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = ref.ID
	}
	for i, r := range recs {
		if r.kind == 2 {
			if _, err := s.Cancel(ctx, o, ids[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, r := range recs {
		st, _, err := s.Result(ctx, o, ids[i], work.MaxResultWait)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		c, cause := r.cancel, r.cause
		mu.Unlock()
		switch r.kind {
		case 0:
			if st.State != work.StateFailed || !errors.Is(cause, context.DeadlineExceeded) {
				t.Errorf("%d: %s cause %v, want failed by its deadline", i, st.State, cause)
				continue
			}
			if due := st.StartedAt.Add(r.d); c.Before(due) {
				t.Errorf("%d: cancelled %v before its deadline", i, due.Sub(c))
			}
			if late := c.Sub(st.StartedAt.Add(r.d)); late > 5*time.Second {
				t.Errorf("%d: cancelled %v late", i, late)
			}
		case 1:
			if st.State != work.StateCompleted {
				t.Errorf("%d: %s, want completed", i, st.State)
			}
		case 2:
			if st.State == work.StateFailed && !errors.Is(cause, context.DeadlineExceeded) {
				t.Errorf("%d: %s", i, st.State)
			}
		}
	}
}

// A Work started with a deadline shorter than the one the shared timer is
// armed for fires at its own deadline, repeatedly, while longer ones stay.
func TestShorterDeadlineRearms(t *testing.T) {
	ctx := context.Background()
	s := work.New(work.WithMaxRunning(64))
	defer s.Close(ctx)
	o := work.NewOwner("a")
	hold := make(chan struct{})
	defer close(hold)
	wait := func(ctx context.Context) (string, error) {
		select {
		case <-hold:
			return "", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	if _, err := s.Start(ctx, work.Spec{Owner: o, Target: agent, Budget: work.Budget{MaxDuration: time.Hour}, Run: wait}); err != nil {
		t.Fatal(err)
	}
	for d := 200 * time.Millisecond; d > time.Millisecond; d /= 2 {
		ref, err := s.Start(ctx, work.Spec{Owner: o, Target: agent, Budget: work.Budget{MaxDuration: d}, Run: wait})
		if err != nil {
			t.Fatal(err)
		}
		st, _, err := s.Result(ctx, o, ref.ID, 5*time.Second)
		if err != nil || st.State != work.StateFailed {
			t.Fatalf("deadline %v: %s, %v", d, st.State, err)
		}
	}
}

// A closed engine on the system clock is not kept alive by its
// deadline timer: a Work with a deadline that ended before Close leaves no
// armed timer behind (an armed timer, for the default 30 minutes, would
// hold the engine, its Observer and all it refers to).
func TestClosedEngineIsCollectable(t *testing.T) {
	wp := func() weak.Pointer[work.Engine] {
		s := work.New() // system clock, default 30 min maximum duration
		o := work.NewOwner("a")
		ref, err := s.Start(context.Background(), work.Spec{Owner: o, Target: fn, Run: immediate("x")})
		if err != nil {
			t.Fatal(err)
		}
		if st, _, err := s.Result(context.Background(), o, ref.ID, work.MaxResultWait); err != nil || st.State != work.StateCompleted {
			t.Fatalf("Result: %v %v", st.State, err)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		return weak.Make(s)
	}()
	for range 5 {
		runtime.GC()
	}
	if wp.Value() != nil {
		t.Fatal("a closed engine stays reachable (its deadline timer is still armed)")
	}
}

// TestSystemClockDeadline: on the system clock a Work's deadline cancels
// its child with the deadline cause, and a Result wait on the system clock
// times out (both use the system clock's own timers).
func TestSystemClockDeadline(t *testing.T) {
	ctx := context.Background()
	s := work.New(work.WithDefaultBudget(work.Budget{MaxDuration: 20 * time.Millisecond}))
	defer s.Close(ctx)
	o := work.NewOwner("clock")
	ref, err := s.Start(ctx, work.Spec{Owner: o, Target: agent, Run: func(ctx context.Context) (string, error) {
		<-ctx.Done()
		return "", context.Cause(ctx)
	}})
	if err != nil {
		t.Fatal(err)
	}
	st, _, err := s.Result(ctx, o, ref.ID, work.MaxResultWait)
	if err != nil || st.State != work.StateFailed {
		t.Fatalf("state %s, %v; want failed", st.State, err)
	}
	gate := make(chan struct{})
	defer close(gate)
	ref, err = s.Start(ctx, work.Spec{Owner: o, Target: agent, Budget: work.Budget{MaxDuration: time.Hour}, Run: func(context.Context) (string, error) {
		<-gate
		return "", nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // a reused wait timer must not fire early or late
		if st, _, err := s.Result(ctx, o, ref.ID, time.Millisecond); err != nil || st.State == work.StateFailed {
			t.Fatalf("state %s, %v", st.State, err)
		}
	}
}
