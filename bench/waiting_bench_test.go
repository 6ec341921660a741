package work_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// BenchmarkGoalWaitingMemory: memory per external job waiting between
// polls (Spec.Job) at 100,000 waiting jobs, on the system clock with the
// default deadline, against the two things it is measured by:
//
//   - queued: the same number of ordinary Works left queued (no goroutine),
//     what a Work costs before it runs; the goal is that a waiting job costs
//     no more (x-queued <= 1).
//   - goroutine: a goroutine per job blocked in the poll loop a Go user
//     would write (a select on a timer and a context).
//
// Figures are from runtime.MemStats deltas (heap plus goroutine stacks)
// and runtime.NumGoroutine, per job. Every job shares one handle, so the
// figure is without its handle: a handle costs its own bytes (len(handle))
// and nothing else, held in the Work's record as a slice.
func BenchmarkGoalWaitingMemory(b *testing.B) {
	const jobs = 100_000
	var waitB, queuedB, goroutineB, goroutines float64
	for range b.N {
		waitB += waitingBytes(b, jobs, &goroutines)
		queuedB += queuedBytes(b, jobs)
		goroutineB += goroutineBytes(jobs)
	}
	n := float64(b.N) * jobs
	b.ReportMetric(waitB/n, "waiting-B/work")
	b.ReportMetric(queuedB/n, "queued-B/work")
	b.ReportMetric(goroutineB/n, "goroutine-B/job")
	b.ReportMetric(goroutines/n, "goroutines/work")
	b.ReportMetric(waitB/queuedB, "x-queued")
}

// waitCounter is an Observer that counts EventWaiting and closes done at
// the n-th.
type waitCounter struct {
	observe.NopObserver
	n    atomic.Int64
	done chan struct{}
}

func (c *waitCounter) Event(_ context.Context, e observe.Event) {
	if e.Type == observe.EventWaiting && c.n.Add(-1) == 0 {
		close(c.done)
	}
}

var benchHandle = []byte("job-handle")

// waitingBytes starts jobs external jobs that all wait (their first poll
// is an hour away) and returns the bytes they added; it adds the
// goroutines they added to *goroutines.
func waitingBytes(b *testing.B, jobs int, goroutines *float64) float64 {
	ctx := context.Background()
	wc := &waitCounter{done: make(chan struct{})}
	wc.n.Store(int64(jobs))
	s := work.New(work.WithObserver(wc), work.WithMaxOutstanding(1<<20), work.WithMaxStarts(0))
	defer s.Close(ctx)
	job := &work.Job{
		Submit:  func(context.Context, string, string) ([]byte, error) { return benchHandle, nil },
		Await:   func(context.Context, []byte) (work.Poll, error) { return work.Poll{}, nil },
		Backoff: work.Backoff{Initial: time.Hour, Max: time.Hour},
	}
	target := work.Target{Label: "batch", Kind: work.KindFunction}
	owners := make([]work.Owner, 1000)
	for i := range owners {
		owners[i] = work.NewOwner(fmt.Sprint("o", i))
	}
	before := memNow()
	g0 := runtime.NumGoroutine()
	for i := range jobs {
		if _, err := s.Start(ctx, work.Spec{Owner: owners[i%len(owners)], Target: target, Job: job}); err != nil {
			b.Fatal(err)
		}
	}
	<-wc.done
	// The last submitting goroutines end after their last event.
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > g0 && time.Now().Before(deadline); {
		runtime.Gosched()
	}
	*goroutines += float64(runtime.NumGoroutine() - g0)
	after := memNow()
	if snap, _ := s.Snapshot(ctx); snap.Waiting != jobs || snap.SlotsInUse != 0 {
		b.Fatalf("%d waiting, %d slots in use", snap.Waiting, snap.SlotsInUse)
	}
	return after - before
}

// queuedBytes leaves jobs ordinary Works queued behind one blocker and
// returns the bytes they added.
func queuedBytes(b *testing.B, jobs int) float64 {
	ctx := context.Background()
	s := work.New(work.WithMaxRunning(1), work.WithMaxOutstanding(1<<20), work.WithMaxStarts(0))
	gate := make(chan struct{})
	defer func() { close(gate); s.Close(ctx) }()
	run := func(context.Context) (string, error) { <-gate; return "", nil }
	owners := make([]work.Owner, 1000)
	for i := range owners {
		owners[i] = work.NewOwner(fmt.Sprint("o", i))
	}
	if _, err := s.Start(ctx, work.Spec{Owner: work.NewOwner("blocker"), Target: fn, Run: run}); err != nil {
		b.Fatal(err)
	}
	before := memNow()
	for i := range jobs {
		if _, err := s.Start(ctx, work.Spec{Owner: owners[i%len(owners)], Target: fn, Run: run}); err != nil {
			b.Fatal(err)
		}
	}
	return memNow() - before
}

// goroutineBytes starts jobs goroutines, each in the poll loop a Go user
// would write for a job (a timer an hour away and a context), and returns
// the bytes they added.
func goroutineBytes(jobs int) float64 {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	started := make(chan struct{}, jobs)
	before := memNow()
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTimer(time.Hour)
			defer t.Stop()
			started <- struct{}{}
			select {
			case <-t.C:
			case <-ctx.Done():
			}
		}()
	}
	for range jobs {
		<-started
	}
	after := memNow()
	cancel()
	wg.Wait()
	return after - before
}

// memNow is the heap in use plus the goroutine stacks, after two
// collections.
func memNow() float64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) + float64(m.StackInuse)
}
