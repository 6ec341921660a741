package work_test

import (
	"context"
	"sync/atomic"
	"testing"
)

// The throughput floor's queue runs every job exactly once, in rounds
// that reuse it (as the benchmark does), and ends each round with its
// slots free, the queue empty and every record forgotten.
func TestFloorQueueRunsEachJobOnce(t *testing.T) {
	const jobs = 5000
	g := smallRegistry(true)
	g.slots, g.forget = 8, true
	for round := range 3 {
		var runs [jobs]atomic.Int32
		var left atomic.Int64
		left.Store(jobs)
		done := make(chan struct{})
		after := func() {
			if left.Add(-1) == 0 {
				close(done)
			}
		}
		for i := range jobs {
			g.start(func(context.Context) (string, error) { runs[i].Add(1); return "x", nil }, after)
		}
		<-done
		for i := range runs {
			if n := runs[i].Load(); n != 1 {
				t.Fatalf("round %d: job %d ran %d times", round, i, n)
			}
		}
		g.mu.Lock()
		used, queued, kept := g.used, len(g.queue)-g.head, len(g.items)
		g.mu.Unlock()
		if used != 0 || queued != 0 || kept != 0 {
			t.Fatalf("round %d: %d slots used, %d queued, %d records kept after every job ran", round, used, queued, kept)
		}
	}
}
