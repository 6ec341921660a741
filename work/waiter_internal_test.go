package work

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"
)

// The system clock's Result waits share one timer over a heap of
// deadlines, and their waiters are reused (waiter.go). These tests run on
// the system clock with short real timeouts; the fake clock's waits are
// result_test.go's.

// waitsLeft returns how many waits the heap holds and whether it has
// waiters.
func waitsLeft(s *Engine, it *item) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waits), it.waiters != nil
}

func itemOf(t *testing.T, s *Engine, o Owner, id string) *item {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	it, err := s.lookupLocked(o, id)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

// TestResultDeadlinesSystemClock: Results on one running Work with
// different timeouts each return the running status at their own
// timeout, earliest first, whatever order they began in; one that outlasts
// the Work returns its output; nothing is left in the heap or the Work's
// list.
func TestResultDeadlinesSystemClock(t *testing.T) {
	s := New()
	defer s.Close(context.Background())
	o := NewOwner("a")
	gate := make(chan struct{})
	ref, err := s.Start(t.Context(), Spec{Owner: o, Target: Target{Label: "fetch", Kind: KindFunction},
		Run: func(ctx context.Context) (string, error) {
			select {
			case <-gate:
				return "x", nil
			case <-ctx.Done(): // Close, after a failure
				return "", ctx.Err()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	it := itemOf(t, s, o, ref.ID)
	type answer struct {
		timeout time.Duration
		elapsed time.Duration
		st      Status
		out     string
	}
	answers := make(chan answer, 4)
	timeouts := []time.Duration{60 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}
	var started sync.WaitGroup
	for _, d := range timeouts {
		started.Add(1)
		go func() {
			t0 := time.Now()
			started.Done()
			st, out, err := s.Result(context.Background(), o, ref.ID, d)
			if err != nil {
				t.Error(err)
			}
			answers <- answer{d, time.Since(t0), st, out}
		}()
	}
	started.Wait()
	var prev time.Duration
	for range timeouts {
		a := <-answers
		if a.st.State != StateRunning || a.out != "" {
			t.Fatalf("timeout %v: %s %q", a.timeout, a.st.State, a.out)
		}
		if a.elapsed < a.timeout {
			t.Fatalf("timeout %v: returned after %v", a.timeout, a.elapsed)
		}
		if a.timeout < prev {
			t.Fatalf("timeout %v returned after timeout %v", a.timeout, prev)
		}
		prev = a.timeout
	}
	if n, listed := waitsLeft(s, it); n != 0 || listed {
		t.Fatalf("after the timeouts: %d in the heap, listed %v", n, listed)
	}
	go func() {
		st, out, _ := s.Result(context.Background(), o, ref.ID, MaxResultWait)
		answers <- answer{MaxResultWait, 0, st, out}
	}()
	for {
		if n, _ := waitsLeft(s, it); n == 1 {
			break
		}
		runtime.Gosched() // until the waiter is registered
	}
	close(gate)
	if a := <-answers; a.st.State != StateCompleted || a.out != "x" {
		t.Fatalf("after settling: %s %q", a.st.State, a.out)
	}
	if n, listed := waitsLeft(s, it); n != 0 || listed {
		t.Fatalf("after settling: %d in the heap, listed %v", n, listed)
	}
}

// TestResultContextSystemClock: a wait whose context ends returns the
// running status and leaves nothing behind; the timer is stopped once the
// engine is closed with no wait left.
func TestResultContextSystemClock(t *testing.T) {
	s := New()
	o := NewOwner("a")
	gate := make(chan struct{})
	ref, err := s.Start(t.Context(), Spec{Owner: o, Target: Target{Label: "fetch", Kind: KindFunction},
		Run: func(ctx context.Context) (string, error) { <-gate; return "", ctx.Err() }})
	if err != nil {
		t.Fatal(err)
	}
	it := itemOf(t, s, o, ref.ID)
	ctx, cancel := context.WithCancel(t.Context())
	res := make(chan Status, 1)
	go func() {
		st, _, _ := s.Result(ctx, o, ref.ID, MaxResultWait)
		res <- st
	}()
	for {
		if n, _ := waitsLeft(s, it); n == 1 {
			break
		}
		runtime.Gosched() // until the waiter is registered
	}
	cancel()
	if st := <-res; st.State != StateRunning {
		t.Fatalf("state = %s", st.State)
	}
	if n, listed := waitsLeft(s, it); n != 0 || listed {
		t.Fatalf("%d in the heap, listed %v", n, listed)
	}
	close(gate)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	armed := s.waitAt != 0
	s.mu.Unlock()
	if armed {
		t.Fatal("the wait timer is still armed after Close")
	}
}

// TestResultWaitersReused: many Results, their contexts ending at random
// around their Works' settlement, on the system clock: each answer is
// consistent (a completed Work's output is its own), and every waiter is
// gone from the heap and its Work at the end. Run with -race: a waiter
// reused while another goroutine still held it shows as a race or a wrong
// answer.
func TestResultWaitersReused(t *testing.T) {
	s := New(WithMaxRunning(4), WithMaxOutstanding(1<<10))
	defer s.Close(context.Background())
	const n = 400
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := NewOwner("o" + string(rune('a'+i%8)))
			want := string(rune('A' + i%26))
			ref, err := s.Start(context.Background(), Spec{Owner: o, Target: Target{Label: "fetch", Kind: KindFunction},
				Run: func(context.Context) (string, error) { return want, nil }})
			if err != nil {
				t.Error(err)
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rand.IntN(200))*time.Microsecond)
			defer cancel()
			st, out, err := s.Result(ctx, o, ref.ID, MaxResultWait)
			switch {
			case err != nil:
				t.Error(err)
			case st.State == StateCompleted && out != want:
				t.Errorf("output %q, want %q", out, want)
			case st.State != StateCompleted && out != "":
				t.Errorf("%s with output %q", st.State, out)
			case st.State != StateCompleted && ctx.Err() == nil:
				t.Errorf("returned %s before its context ended or its Work settled", st.State)
			}
		}()
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.waits) != 0 {
		t.Fatalf("%d waits left in the heap", len(s.waits))
	}
}

// TestResultLookupAfterWait: a Result finds its Work again after the wait
// as a lookup by id would: gone when its owner was released or it was
// evicted as it settled (ErrNotFound), there otherwise.
func TestResultLookupAfterWait(t *testing.T) {
	fetch := Target{Label: "fetch", Kind: KindFunction}
	for _, tt := range []struct {
		name string
		end  func(s *Engine, o Owner, gate chan struct{})
		gone bool
	}{
		{"settled", func(s *Engine, o Owner, gate chan struct{}) { close(gate) }, false},
		{"released", func(s *Engine, o Owner, gate chan struct{}) {
			if err := s.Release(context.Background(), o); err != nil {
				t.Error(err)
			}
		}, true},
		{"evicted as it settled", func(s *Engine, o Owner, gate chan struct{}) { close(gate) }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := New(WithRetention(1, 0))
			defer s.Close(context.Background())
			o := NewOwner("a")
			out, fail := "x", error(nil)
			if tt.gone && tt.name != "released" {
				// An unread completed Work first: the failing one goes
				// before it when the retention bound evicts.
				ref, err := s.Start(t.Context(), Spec{Owner: o, Target: fetch, Run: func(context.Context) (string, error) { return "y", nil }})
				if err != nil {
					t.Fatal(err)
				}
				for st, _ := s.Status(t.Context(), o, ref.ID); !st.State.Terminal(); st, _ = s.Status(t.Context(), o, ref.ID) {
					runtime.Gosched()
				}
				out, fail = "", errors.New("boom")
			}
			gate := make(chan struct{})
			ref, err := s.Start(t.Context(), Spec{Owner: o, Target: fetch, Run: func(ctx context.Context) (string, error) {
				select {
				case <-gate:
					return out, fail
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			it := itemOf(t, s, o, ref.ID)
			res := make(chan error, 1)
			go func() {
				_, _, err := s.Result(context.Background(), o, ref.ID, MaxResultWait)
				res <- err
			}()
			for {
				if n, _ := waitsLeft(s, it); n == 1 {
					break
				}
				runtime.Gosched() // until the waiter is registered
			}
			tt.end(s, o, gate)
			err = <-res
			if gone := errors.Is(err, ErrNotFound); gone != tt.gone || (!gone && err != nil) {
				t.Fatalf("Result: %v, want gone %v", err, tt.gone)
			}
		})
	}
}
