package work_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/agentwork/agentwork/internal/fakeclock"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
)

// Benchmarks, each beside its baseline measured in the same run:
//
//	BenchmarkStart / BenchmarkBaselineGoroutineChannel: start -> Ref
//	BenchmarkResultWakeup: settlement -> Result returns, vs a bare handoff
//	BenchmarkList, BenchmarkStatus: owner with 10 items, 100,000 other
//	  items registered vs none (ratio reported; must stay under 2)
//	BenchmarkRows10k: status rows for an owner with 10,000 items
//	BenchmarkLiveMemory: bytes per live Work at 100,000, queued and running

const clearEvery = 1024

// BenchmarkStart measures Start -> Ref for children that return at once.
// Every 1024 starts the timer stops until they have all finished and the
// owner is released.
func BenchmarkStart(b *testing.B) {
	ctx := context.Background()
	sig := terminalSignal{ch: make(chan struct{}, clearEvery)}
	s := work.New(work.WithObserver(sig), work.WithMaxStarts(0), work.WithMaxOutstanding(1<<20))
	defer s.Close(ctx)
	o := work.NewOwner("bench")
	spec := work.Spec{Owner: o, Target: agent, Run: immediate("x")}
	pending := 0
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := s.Start(ctx, spec); err != nil {
			b.Fatal(err)
		}
		if pending++; pending == clearEvery {
			b.StopTimer()
			for range pending {
				<-sig.ch
			}
			s.Release(ctx, o)
			pending = 0
			b.StartTimer()
		}
	}
	b.StopTimer()
	for range pending {
		<-sig.ch
	}
}

// BenchmarkBaselineGoroutineChannel is Start's baseline: a bare goroutine
// per unit of work that hands its result back on its own channel.
func BenchmarkBaselineGoroutineChannel(b *testing.B) {
	run := immediate("x")
	chans := make([]chan string, 0, clearEvery)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		ch := make(chan string, 1)
		go func() {
			out, _ := run(context.Background())
			ch <- out
		}()
		if chans = append(chans, ch); len(chans) == clearEvery {
			b.StopTimer()
			for _, ch := range chans {
				<-ch
			}
			chans = chans[:0]
			b.StartTimer()
		}
	}
	b.StopTimer()
	for _, ch := range chans {
		<-ch
	}
}

// BenchmarkResultWakeup measures, per op, the time from releasing a running
// child to the return of a Result call that was already waiting on it,
// interleaved with the same shape built from bare channels (a worker
// goroutine closing a done channel, a waiter goroutine blocked on it).
// ns/op covers the setup as well; the metrics are the wake-ups alone.
func BenchmarkResultWakeup(b *testing.B) {
	ctx := context.Background()
	clk := fakeclock.New(t0)
	s := work.New(work.WithClock(clk), work.WithMaxStarts(0), work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	defer s.Close(ctx)
	o := work.NewOwner("bench")
	var engine, bare time.Duration
	reply := make(chan struct{})
	b.ReportAllocs()
	for i := range b.N {
		// The engine.
		gate := make(chan struct{})
		ref, err := s.Start(ctx, work.Spec{Owner: o, Target: agent, Run: func(context.Context) (string, error) {
			<-gate
			return "x", nil
		}})
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			s.Result(ctx, o, ref.ID, work.MaxResultWait)
			reply <- struct{}{}
		}()
		clk.BlockUntil(1) // Result is about to wait
		t1 := time.Now()
		close(gate)
		<-reply
		engine += time.Since(t1)
		s.Detach(ctx, o, ref.ID)

		// The bare baseline.
		gate2, done := make(chan struct{}), make(chan struct{})
		go func() { <-gate2; close(done) }()
		waiting := make(chan struct{})
		go func() { close(waiting); <-done; reply <- struct{}{} }()
		<-waiting
		runtime.Gosched()
		t2 := time.Now()
		close(gate2)
		<-reply
		bare += time.Since(t2)
		if i%clearEvery == 0 {
			s.Release(ctx, o)
		}
	}
	b.ReportMetric(float64(engine.Nanoseconds())/float64(b.N), "engine-ns/wake")
	b.ReportMetric(float64(bare.Nanoseconds())/float64(b.N), "chan-ns/wake")
	b.ReportMetric(float64(engine)/float64(bare), "ratio")
}

// registry builds an engine on which owner "target" has 10 visible
// Works (6 completed, 4 queued) and, when others > 0, others more Works are
// registered for other owners (10 each, queued: they hold no goroutine).
func registry(b *testing.B, others int) (*work.Engine, []string, func()) {
	ctx := context.Background()
	sig := terminalSignal{ch: make(chan struct{}, 16), lossy: true} // Close cancels 100,000
	s := work.New(work.WithClock(fakeclock.New(t0)), work.WithObserver(sig), work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	target := work.NewOwner("target")
	var ids []string
	for range 6 {
		ref, err := s.Start(ctx, work.Spec{Owner: target, Target: agent, Run: immediate("out")})
		if err != nil {
			b.Fatal(err)
		}
		<-sig.ch
		ids = append(ids, ref.ID)
	}
	gate := make(chan struct{})
	block := func(context.Context) (string, error) { <-gate; return "", nil }
	for i := range work.DefaultMaxRunning {
		if _, err := s.Start(ctx, work.Spec{Owner: work.NewOwner(fmt.Sprint("blocker-", i)), Target: fn, Run: block}); err != nil {
			b.Fatal(err)
		}
	}
	for range 4 {
		ref, err := s.Start(ctx, work.Spec{Owner: target, Target: agent, Run: block})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, ref.ID)
	}
	for i := range others {
		o := work.NewOwner(fmt.Sprintf("other-%d", i/10))
		if _, err := s.Start(ctx, work.Spec{Owner: o, Target: agent, Run: block}); err != nil {
			b.Fatal(err)
		}
	}
	return s, ids, func() {
		close(gate)
		s.Close(ctx)
	}
}

// compare times op on an empty and on a loaded registry in alternating
// chunks, and reports both and their ratio.
func compare(b *testing.B, op func(s *work.Engine, ids []string, i int)) {
	empty, eids, stopEmpty := registry(b, 0)
	defer stopEmpty()
	loaded, lids, stopLoaded := registry(b, 100_000)
	defer stopLoaded()
	runtime.GC()
	const chunk = 256
	var te, tl time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += chunk {
		n := min(chunk, b.N-done)
		t := time.Now()
		for i := range n {
			op(empty, eids, i)
		}
		te += time.Since(t)
		t = time.Now()
		for i := range n {
			op(loaded, lids, i)
		}
		tl += time.Since(t)
	}
	b.StopTimer()
	ratio := float64(tl) / float64(te)
	b.ReportMetric(float64(te.Nanoseconds())/float64(b.N), "empty-ns/op")
	b.ReportMetric(float64(tl.Nanoseconds())/float64(b.N), "loaded-ns/op")
	b.ReportMetric(ratio, "loaded/empty")
	if b.N >= 10_000 && ratio >= 2 {
		b.Errorf("an owner's operation costs %.2fx as much with 100,000 other items registered; want < 2", ratio)
	}
}

// BenchmarkList: List for an owner with 10 items; ns/op is the sum of
// one empty-registry and one loaded-registry call.
func BenchmarkList(b *testing.B) {
	target := work.NewOwner("target")
	compare(b, func(s *work.Engine, _ []string, _ int) {
		if l, _ := s.List(b.Context(), target); len(l) != 10 {
			b.Fatalf("listed %d", len(l))
		}
	})
}

// BenchmarkStatus: Status of one of an owner's 10 items.
func BenchmarkStatus(b *testing.B) {
	target := work.NewOwner("target")
	compare(b, func(s *work.Engine, ids []string, i int) {
		if _, err := s.Status(b.Context(), target, ids[i%len(ids)]); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkRows10k: the boundary status rows for an owner with 10,000
// visible Works (7,000 finished, 100 running, 2,900 queued).
func BenchmarkRows10k(b *testing.B) {
	ctx := context.Background()
	const finished = 7000
	sig := terminalSignal{ch: make(chan struct{}, finished)}
	s := work.New(work.WithClock(fakeclock.New(t0)), work.WithObserver(sig), work.WithDefaultBudget(work.Budget{MaxDuration: -1}),
		work.WithMaxRunning(100), work.WithMaxOutstanding(1<<20), work.WithMaxStarts(0), work.WithRetention(1<<20, 0))
	gate := make(chan struct{})
	defer func() { close(gate); s.Close(ctx) }()
	o := work.NewOwner("busy")
	for i := range finished {
		run := immediate("out")
		if i%7 == 0 {
			run = func(context.Context) (string, error) { return "", errBoom }
		}
		if _, err := s.Start(ctx, work.Spec{Owner: o, Target: agent, Run: run}); err != nil {
			b.Fatal(err)
		}
	}
	for range finished {
		<-sig.ch
	}
	for range 3000 {
		if _, err := s.Start(ctx, work.Spec{Owner: o, Target: agent, Run: func(context.Context) (string, error) { <-gate; return "", nil }}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if rows, more, _ := boundary.Rows(ctx, s, o); len(rows) != boundary.MaxRows || more != 10000-boundary.MaxRows {
			b.Fatalf("rows %d more %d", len(rows), more)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10000, "ns/item")
}

// BenchmarkLiveMemory measures memory per live Work at 100,000 live Works,
// queued (no goroutine) and running (a goroutine blocked in the child, a
// deadline timer), from runtime.MemStats deltas: heap, goroutine stacks
// (StackInuse) and memory obtained from the OS (Sys).
func BenchmarkLiveMemory(b *testing.B) {
	const live = 100_000
	for _, mode := range []string{"queued", "running"} {
		b.Run(mode, func(b *testing.B) {
			var heapB, stackB, sysB float64
			for range b.N {
				ctx := context.Background()
				running := work.DefaultMaxRunning
				if mode == "running" {
					running = live + 1
				}
				s := work.New(work.WithMaxRunning(running), work.WithMaxOutstanding(1<<20), work.WithMaxStarts(0))
				gate := make(chan struct{})
				run := func(context.Context) (string, error) { <-gate; return "", nil }
				before := heap()
				for i := range live {
					o := work.NewOwner(fmt.Sprint("o", i%1000))
					if _, err := s.Start(ctx, work.Spec{Owner: o, Target: agent, Run: run}); err != nil {
						b.Fatal(err)
					}
				}
				after := heap()
				if c := census(s); c[work.StateQueued]+c[work.StateRunning] != live {
					b.Fatalf("census %v", c)
				}
				heapB += float64(int64(after.HeapAlloc) - int64(before.HeapAlloc))
				stackB += float64(int64(after.StackInuse) - int64(before.StackInuse))
				sysB += float64(int64(after.Sys) - int64(before.Sys))
				close(gate)
				s.Close(ctx)
			}
			n := float64(b.N) * live
			b.ReportMetric(heapB/n, "heap-B/work")
			b.ReportMetric(stackB/n, "stack-B/work")
			b.ReportMetric((heapB+stackB)/n, "B/work")
			b.ReportMetric(sysB/n, "sys-B/work")
		})
	}
}
