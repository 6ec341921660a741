package work_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
)

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
		ref, err := s.Start(ctx, work.Spec{Owner: o, Target: agent, MaxDuration: r.d, Run: func(ctx context.Context) (string, error) {
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
			if _, err := s.Cancel(o, ids[i]); err != nil {
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
	if _, err := s.Start(ctx, work.Spec{Owner: o, Target: agent, MaxDuration: time.Hour, Run: wait}); err != nil {
		t.Fatal(err)
	}
	for d := 200 * time.Millisecond; d > time.Millisecond; d /= 2 {
		ref, err := s.Start(ctx, work.Spec{Owner: o, Target: agent, MaxDuration: d, Run: wait})
		if err != nil {
			t.Fatal(err)
		}
		st, _, err := s.Result(ctx, o, ref.ID, 5*time.Second)
		if err != nil || st.State != work.StateFailed {
			t.Fatalf("deadline %v: %s, %v", d, st.State, err)
		}
	}
}
