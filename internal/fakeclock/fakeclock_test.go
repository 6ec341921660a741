package fakeclock_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentwork/agentwork/internal/fakeclock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestNowAdvanceSet(t *testing.T) {
	c := fakeclock.New(t0)
	if got := c.Now(); !got.Equal(t0) {
		t.Fatalf("Now = %v, want %v", got, t0)
	}
	c.Advance(90 * time.Second)
	if got := c.Now(); !got.Equal(t0.Add(90 * time.Second)) {
		t.Fatalf("after Advance: %v", got)
	}
	c.Advance(-time.Hour) // ignored
	if got := c.Now(); !got.Equal(t0.Add(90 * time.Second)) {
		t.Fatalf("negative Advance moved the clock: %v", got)
	}
	c.Set(t0)
	if got := c.Now(); !got.Equal(t0) {
		t.Fatalf("Set backward: %v", got)
	}
}

func TestAdvanceRunsDueTimersInDeadlineOrder(t *testing.T) {
	c := fakeclock.New(t0)
	var order []string
	var seen []time.Time
	add := func(name string, d time.Duration) func() bool {
		return c.AfterFunc(d, func() {
			order = append(order, name)
			seen = append(seen, c.Now())
		})
	}
	add("c", 3*time.Second)
	add("a", 1*time.Second)
	add("b1", 2*time.Second)
	add("b2", 2*time.Second) // same deadline: scheduling order
	add("late", time.Hour)
	stopped := add("stopped", 2*time.Second)
	if !stopped() {
		t.Fatal("stop of a pending timer reported false")
	}
	if stopped() {
		t.Fatal("second stop reported true")
	}
	if n := c.Pending(); n != 5 {
		t.Fatalf("Pending = %d, want 5", n)
	}
	c.Advance(3 * time.Second)
	want := []string{"a", "b1", "b2", "c"}
	if len(order) != len(want) {
		t.Fatalf("ran %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("ran %v, want %v", order, want)
		}
	}
	wantAt := []time.Duration{time.Second, 2 * time.Second, 2 * time.Second, 3 * time.Second}
	for i, d := range wantAt {
		if !seen[i].Equal(t0.Add(d)) {
			t.Errorf("timer %s saw Now=%v, want %v", order[i], seen[i], t0.Add(d))
		}
	}
	if n := c.Pending(); n != 1 {
		t.Fatalf("Pending = %d, want 1", n)
	}
}

func TestStopAfterRunReportsFalse(t *testing.T) {
	c := fakeclock.New(t0)
	ran := 0
	stop := c.AfterFunc(time.Second, func() { ran++ })
	c.Advance(time.Second)
	if ran != 1 || stop() {
		t.Fatalf("ran=%d, stop after run must report false", ran)
	}
}

func TestZeroDurationDueOnNextAdvance(t *testing.T) {
	c := fakeclock.New(t0)
	ran := false
	c.AfterFunc(0, func() { ran = true })
	if ran {
		t.Fatal("ran before the clock moved")
	}
	c.Advance(0)
	if !ran {
		t.Fatal("Advance(0) did not run a due timer")
	}
}

func TestTimerScheduledByTimerRunsInSameAdvance(t *testing.T) {
	c := fakeclock.New(t0)
	var order []int
	c.AfterFunc(time.Second, func() {
		order = append(order, 1)
		c.AfterFunc(time.Second, func() { order = append(order, 2) })    // due at 2s
		c.AfterFunc(10*time.Second, func() { order = append(order, 3) }) // beyond
	})
	c.Advance(5 * time.Second)
	if len(order) != 2 || order[0] != 1 || order[1] != 2 {
		t.Fatalf("order = %v, want [1 2]", order)
	}
	if !c.Now().Equal(t0.Add(5 * time.Second)) {
		t.Fatalf("Now = %v", c.Now())
	}
}

func TestSetForwardRunsTimersBackwardRunsNone(t *testing.T) {
	c := fakeclock.New(t0)
	ran := 0
	c.AfterFunc(time.Minute, func() { ran++ })
	c.Set(t0.Add(-time.Hour))
	if ran != 0 {
		t.Fatal("backward Set ran a timer")
	}
	c.Set(t0.Add(time.Hour))
	if ran != 1 {
		t.Fatalf("forward Set: ran=%d, want 1", ran)
	}
}

func TestBlockUntil(t *testing.T) {
	c := fakeclock.New(t0)
	const n = 5
	var wg sync.WaitGroup
	fired := make(chan int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.AfterFunc(time.Duration(i+1)*time.Second, func() { fired <- i })
		}()
	}
	c.BlockUntil(n)
	wg.Wait()
	c.Advance(time.Minute)
	for i := range n {
		if got := <-fired; got != i {
			t.Fatalf("fired %d, want %d", got, i)
		}
	}
	c.BlockUntil(0) // already satisfied
}

func TestBlockUntilContext(t *testing.T) {
	c := fakeclock.New(t0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.BlockUntilContext(ctx, 1) }()
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	go func() { done <- c.BlockUntilContext(context.Background(), 1) }()
	c.AfterFunc(time.Second, func() {})
	if err := <-done; err != nil {
		t.Fatalf("err = %v", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	c := fakeclock.New(t0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	count := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 100 {
				stop := c.AfterFunc(time.Duration(j)*time.Millisecond, func() {
					mu.Lock()
					count++
					mu.Unlock()
				})
				if j%3 == 0 {
					stop()
				}
				_ = c.Now()
			}
		}()
	}
	for range 50 {
		c.Advance(time.Millisecond)
	}
	wg.Wait()
	c.Advance(time.Second)
	if c.Pending() != 0 {
		t.Fatalf("Pending = %d after advancing past every deadline", c.Pending())
	}
	mu.Lock()
	defer mu.Unlock()
	// 8 goroutines x 100 timers, 34 of each 100 stopped (j%3==0) unless they
	// had already run; at least 8*66 ran.
	if count < 8*66 || count > 800 {
		t.Fatalf("ran %d timers", count)
	}
}
