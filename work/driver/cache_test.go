package driver

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work/observe"
)

func TestCacheRefreshesOncePerInterval(t *testing.T) {
	var c Cache
	var mu sync.Mutex
	calls := 0
	fail := false
	refresh := func(context.Context) (observe.Snapshot, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if fail {
			return observe.Snapshot{}, errors.New("server down")
		}
		return observe.Snapshot{SlotsInUse: calls}, nil
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if snap, err := c.Snapshot(context.Background(), time.Hour, refresh); err != nil || snap.SlotsInUse != 1 {
				t.Errorf("shared refresh: %+v %v", snap, err)
			}
		})
	}
	wg.Wait()
	if calls != 1 {
		t.Fatalf("%d refreshes for 8 concurrent callers", calls)
	}
	// Interval 0: every call refreshes; a failure is returned and not kept.
	mu.Lock()
	fail = true
	mu.Unlock()
	if _, err := c.Snapshot(context.Background(), 0, refresh); err == nil {
		t.Fatal("a failed refresh is its error")
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	if snap, err := c.Snapshot(context.Background(), time.Hour, refresh); err != nil || snap.SlotsInUse != 3 {
		t.Fatalf("after a failure the next call refreshes: %+v %v (calls %d)", snap, err, calls)
	}
}
