package work_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/sourcegraph/conc/pool"
	"golang.org/x/sync/errgroup"

	"github.com/agentwork/agentwork/bench/internal/benchpair"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// The Goal benchmarks measure the engine against what a Go user would write
// instead, arm by arm in alternating chunks of one run (internal/benchpair),
// and report the ratios that make bench prints beside their goals:
//
//	BenchmarkGoalStart:      Start -> Ref vs go + channel (x-goroutine, engine-allocs/op)
//	BenchmarkGoalAwait:      Start + Result vs go + channel receive
//	BenchmarkGoalThroughput: 100,000 trivial Works through 8 slots vs
//	                         errgroup.SetLimit(8) and a conc pool of 8

// BenchmarkGoalStart: Start -> Ref for children that return at once, as
// BenchmarkStart measures it (the children run and settle concurrently;
// between chunks, untimed, all of them have settled and the owner is
// released), against a goroutine per unit that sends its result on its
// own channel.
func BenchmarkGoalStart(b *testing.B) {
	const chunk = 256
	ctx := context.Background()
	sig := terminalSignal{ch: make(chan struct{}, chunk)}
	s := work.New(work.WithObserver(sig), work.WithMaxStarts(0), work.WithMaxOutstanding(1<<20))
	defer s.Close(ctx)
	o := work.NewOwner("bench")
	spec := work.Spec{Owner: o, Target: agent, Run: immediate("x")}
	run := immediate("x")
	b.ReportAllocs()
	r := benchpair.Run(b, chunk,
		benchpair.Arm{Name: "engine", Run: func(n int) func() {
			for range n {
				if _, err := s.Start(ctx, spec); err != nil {
					b.Fatal(err)
				}
			}
			return func() {
				for range n {
					<-sig.ch
				}
				s.Release(ctx, o)
			}
		}},
		goroutineStarts(chunk, run),
	)
	b.ReportMetric(r[0].NsPerOp/r[1].NsPerOp, "x-goroutine")
	b.ReportMetric(startAllocs(b), "start-allocs/op")
}

// startAllocs returns the allocations of one Start call itself, on the
// starting goroutine, for Work dispatched at once: its children block
// until the measurement is over, so none of their settlement is counted.
func startAllocs(b *testing.B) float64 {
	ctx := context.Background()
	gate := make(chan struct{})
	s := work.New(work.WithMaxStarts(0), work.WithMaxOutstanding(1<<20), work.WithMaxRunning(1<<20))
	defer func() { close(gate); s.Close(ctx) }()
	spec := work.Spec{Owner: work.NewOwner("allocs"), Target: agent,
		Run: func(context.Context) (string, error) { <-gate; return "", nil }}
	return testing.AllocsPerRun(1000, func() {
		if _, err := s.Start(ctx, spec); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkGoalAwait: Start, then Result waiting for the output, one at a
// time, against starting a goroutine and receiving its result from its
// channel.
func BenchmarkGoalAwait(b *testing.B) {
	ctx := context.Background()
	s := work.New(work.WithMaxStarts(0))
	defer s.Close(ctx)
	o := work.NewOwner("bench")
	spec := work.Spec{Owner: o, Target: agent, Run: immediate("x")}
	run := immediate("x")
	b.ReportAllocs()
	r := benchpair.Run(b, 256,
		benchpair.Arm{Name: "engine", Run: func(n int) func() {
			for range n {
				ref, err := s.Start(ctx, spec)
				if err != nil {
					b.Fatal(err)
				}
				if st, out, err := s.Result(ctx, o, ref.ID, work.MaxResultWait); err != nil || out != "x" {
					b.Fatal(st.State, err)
				}
			}
			return nil
		}},
		goroutineAwaits(b, run),
	)
	b.ReportMetric(r[0].NsPerOp/r[1].NsPerOp, "x-goroutine")
}

// countdown is an Observer that closes done once n Works are terminal.
type countdown struct {
	observe.NopObserver
	n    atomic.Int64
	done chan struct{}
}

func (c *countdown) Event(_ context.Context, e observe.Event) {
	if e.To.Terminal() && e.Type == observe.EventType(e.To) && c.n.Add(-1) == 0 {
		close(c.done)
	}
}

// BenchmarkGoalThroughput: one op is 100,000 trivial Works through 8
// running slots, submitted at once and waited for together, against
// errgroup with SetLimit(8) and a conc pool of 8 goroutines. The metrics
// are per Work.
func BenchmarkGoalThroughput(b *testing.B) {
	const works = 100_000
	ctx := context.Background()
	cd := &countdown{}
	s := work.New(work.WithObserver(cd), work.WithMaxRunning(8), work.WithMaxStarts(0),
		work.WithMaxOutstanding(works), work.WithRetention(0, 0))
	defer s.Close(ctx)
	o := work.NewOwner("bench")
	spec := work.Spec{Owner: o, Target: fn, Run: immediate("x")}
	trivial := func() error { _, err := spec.Run(ctx); return err }
	b.ReportAllocs()
	r := benchpair.Run(b, 1,
		benchpair.Arm{Name: "engine", Run: func(n int) func() {
			for range n {
				cd.n.Store(works)
				cd.done = make(chan struct{})
				for range works {
					if _, err := s.Start(ctx, spec); err != nil {
						b.Fatal(err)
					}
				}
				<-cd.done
				s.Release(ctx, o)
			}
			return nil
		}},
		errgroupThrough(b, works, trivial),
		benchpair.Arm{Name: "conc", Run: func(n int) func() {
			for range n {
				p := pool.New().WithErrors().WithMaxGoroutines(8)
				for range works {
					p.Go(trivial)
				}
				if err := p.Wait(); err != nil {
					b.Fatal(err)
				}
			}
			return nil
		}},
	)
	b.ReportMetric(r[0].NsPerOp/works, "engine-ns/work")
	b.ReportMetric(r[1].NsPerOp/works, "errgroup-ns/work")
	b.ReportMetric(r[2].NsPerOp/works, "conc-ns/work")
	b.ReportMetric(r[0].AllocsPerOp/works, "engine-allocs/work")
	b.ReportMetric(r[0].NsPerOp/r[1].NsPerOp, "x-errgroup")
	b.ReportMetric(r[0].NsPerOp/r[2].NsPerOp, "x-conc")
}

// goroutineStarts is the baseline arm of the start benchmarks: a goroutine
// per unit that sends run's output on its own channel; the channels are
// drained between chunks, untimed (chunk: the chunk size, for the
// slice's capacity).
func goroutineStarts(chunk int, run func(context.Context) (string, error)) benchpair.Arm {
	chans := make([]chan string, 0, chunk)
	return benchpair.Arm{Name: "goroutine", Run: func(n int) func() {
		for range n {
			ch := make(chan string, 1)
			go func() {
				out, _ := run(context.Background())
				ch <- out
			}()
			chans = append(chans, ch)
		}
		return func() {
			for _, ch := range chans {
				<-ch
			}
			chans = chans[:0]
		}
	}}
}

// goroutineAwaits is the baseline arm of the await benchmarks: start a
// goroutine and receive run's output ("x") from its channel, one at a time.
func goroutineAwaits(b *testing.B, run func(context.Context) (string, error)) benchpair.Arm {
	return benchpair.Arm{Name: "goroutine", Run: func(n int) func() {
		for range n {
			ch := make(chan string, 1)
			go func() {
				out, _ := run(context.Background())
				ch <- out
			}()
			if <-ch != "x" {
				b.Fatal("lost")
			}
		}
		return nil
	}}
}

// errgroupThrough is the baseline arm of the throughput benchmarks: works
// calls of trivial through errgroup.SetLimit(8), waited for together.
func errgroupThrough(b *testing.B, works int, trivial func() error) benchpair.Arm {
	return benchpair.Arm{Name: "errgroup", Run: func(n int) func() {
		for range n {
			var g errgroup.Group
			g.SetLimit(8)
			for range works {
				g.Go(trivial)
			}
			if err := g.Wait(); err != nil {
				b.Fatal(err)
			}
		}
		return nil
	}}
}
