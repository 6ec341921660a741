package work_test

import (
	"context"
	"encoding/hex"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwork/agentwork/bench/internal/benchpair"
)

// The Floor benchmarks measure what any registry of awaitable work costs
// in the Goal benchmarks' shapes, against the same baselines: a random
// 128-bit id; a record in the engine item's size class (896 bytes), in the
// largest class the allocator keeps without a header (512) or a small one
// (48); a map under a mutex; a goroutine that records the output under the
// mutex; for await a done channel and a lookup; for throughput a FIFO queue
// behind 8 running slots, whose records are forgotten as they settle (as
// the engine's retention bound drops all but a few). No events, owner
// limits, budgets, fairness or ordering.
// The contract variants add the two costs the work tool's contract obliges
// every Work to carry: a child context cancellable with a cause
// (cooperative cancel; cancelled as the Work settles) and, for await, a
// wait capped by a timer. They are not goals: they say how much of a Goal
// ratio is left to the engine's own work.
//	go test -run '^$' -bench '^BenchmarkFloor' ./work

// floorRecord is a registry record padded to the engine's item's size.
type floorRecord struct {
	id    string
	state int
	out   string
	done  chan struct{}
	_     [816]byte
}

// floorMid is the same record padded to 512 bytes, the largest size class
// whose objects the Go allocator keeps without a header.
type floorMid struct {
	id    string
	state int
	out   string
	done  chan struct{}
	_     [464]byte
}

// floorSmall is the same record without the padding.
type floorSmall struct {
	id    string
	state int
	out   string
	done  chan struct{}
}

// floorRegistry is the least a registry of awaitable work does.
type floorRegistry[R any] struct {
	mu    sync.Mutex
	items map[string]*R
	src   *mrand.ChaCha8
	make  func(id string) *R
	rec   func(r *R) (state *int, out *string, done *chan struct{})
	// contract: each child runs with a context cancellable with a cause,
	// cancelled as it settles, and await's wait is capped by a timer.
	contract bool
	timers   sync.Pool
	// slots, when > 0, limits the children running at once: the others
	// wait in queue (FIFO, from head), and a child's goroutine runs the
	// next one as it settles. used counts the slots in use.
	slots, used, head int
	queue             []floorJob[R]
	// forget: a settled child's record leaves the map at once.
	forget bool
}

// floorJob is a queued child.
type floorJob[R any] struct {
	id    string
	r     *R
	run   func(context.Context) (string, error)
	after func()
}

func newFloorRegistry[R any](mk func(id string) *R, rec func(r *R) (*int, *string, *chan struct{})) *floorRegistry[R] {
	return &floorRegistry[R]{items: map[string]*R{}, src: mrand.NewChaCha8([32]byte{1}), make: mk, rec: rec}
}

// start registers a record and runs run on a goroutine of its own, which
// records the output and then calls after (may be nil).
func (g *floorRegistry[R]) start(run func(context.Context) (string, error), after func()) string {
	var b [16]byte
	_, _ = g.src.Read(b[:])
	id := hex.EncodeToString(b[:])
	r := g.make(id)
	j := floorJob[R]{id: id, r: r, run: run, after: after}
	g.mu.Lock()
	g.items[id] = r
	if g.slots > 0 && g.used == g.slots {
		g.queue = append(g.queue, j)
		g.mu.Unlock()
		return id
	}
	g.used++
	g.mu.Unlock()
	go g.execute(j)
	return id
}

// execute runs j's child and records its output, then the queued ones
// while there are any.
func (g *floorRegistry[R]) execute(j floorJob[R]) {
	for {
		ctx, cancel := context.Background(), context.CancelCauseFunc(nil)
		if g.contract {
			ctx, cancel = context.WithCancelCause(ctx)
		}
		out, _ := j.run(ctx)
		state, o, done := g.rec(j.r)
		g.mu.Lock()
		*o, *state = out, 1
		d := *done
		if g.forget {
			delete(g.items, j.id)
		}
		cur, more := j, g.head < len(g.queue)
		if more {
			j = g.queue[g.head]
			g.queue[g.head] = floorJob[R]{}
			g.head++
		} else {
			g.queue, g.head = g.queue[:0], 0
			g.used--
		}
		g.mu.Unlock()
		if cancel != nil {
			cancel(nil)
		}
		if d != nil {
			close(d)
		}
		if cur.after != nil {
			cur.after()
		}
		if !more {
			return
		}
	}
}

// await waits for id's output, reads it and forgets the record.
func (g *floorRegistry[R]) await(id string) string {
	g.mu.Lock()
	r := g.items[id]
	state, out, done := g.rec(r)
	var d chan struct{}
	if *state == 0 {
		*done = make(chan struct{})
		d = *done
	}
	g.mu.Unlock()
	if d != nil && g.contract {
		t, _ := g.timers.Get().(*time.Timer)
		if t == nil {
			t = time.NewTimer(time.Minute)
		} else {
			t.Reset(time.Minute)
		}
		select {
		case <-d:
		case <-t.C:
		}
		t.Stop()
		g.timers.Put(t)
	} else if d != nil {
		<-d
	}
	g.mu.Lock()
	o := *out
	delete(g.items, id)
	g.mu.Unlock()
	return o
}

func bigRegistry(contract bool) *floorRegistry[floorRecord] {
	g := newFloorRegistry(func(id string) *floorRecord { return &floorRecord{id: id} },
		func(r *floorRecord) (*int, *string, *chan struct{}) { return &r.state, &r.out, &r.done })
	g.contract = contract
	return g
}

func midRegistry(contract bool) *floorRegistry[floorMid] {
	g := newFloorRegistry(func(id string) *floorMid { return &floorMid{id: id} },
		func(r *floorMid) (*int, *string, *chan struct{}) { return &r.state, &r.out, &r.done })
	g.contract = contract
	return g
}

func smallRegistry(contract bool) *floorRegistry[floorSmall] {
	g := newFloorRegistry(func(id string) *floorSmall { return &floorSmall{id: id} },
		func(r *floorSmall) (*int, *string, *chan struct{}) { return &r.state, &r.out, &r.done })
	g.contract = contract
	return g
}

// BenchmarkFloorStart: BenchmarkGoalStart's shape (start, the outputs
// recorded concurrently; between chunks, untimed, all have been) for the
// floor registry with a record in the item's size class and a small one,
// without and with the contract's costs.
func BenchmarkFloorStart(b *testing.B) {
	b.Run("record=896B", func(b *testing.B) { floorStart(b, bigRegistry(false)) })
	b.Run("record=48B", func(b *testing.B) { floorStart(b, smallRegistry(false)) })
	b.Run("contract/record=896B", func(b *testing.B) { floorStart(b, bigRegistry(true)) })
	b.Run("contract/record=512B", func(b *testing.B) { floorStart(b, midRegistry(true)) })
	b.Run("contract/record=48B", func(b *testing.B) { floorStart(b, smallRegistry(true)) })
}

func floorStart[R any](b *testing.B, g *floorRegistry[R]) {
	const chunk = 256
	run := immediate("x")
	sig := make(chan struct{}, chunk)
	signal := func() { sig <- struct{}{} }
	r := benchpair.Run(b, chunk,
		benchpair.Arm{Name: "floor", Run: func(n int) func() {
			for range n {
				g.start(run, signal)
			}
			return func() {
				for range n {
					<-sig
				}
				g.mu.Lock()
				clear(g.items)
				g.mu.Unlock()
			}
		}},
		goroutineStarts(chunk, run),
	)
	b.ReportMetric(r[0].NsPerOp/r[1].NsPerOp, "x-goroutine")
}

// BenchmarkFloorAwait: BenchmarkGoalAwait's shape (start, then wait for
// the output, one at a time) for the floor registry.
func BenchmarkFloorAwait(b *testing.B) {
	b.Run("record=896B", func(b *testing.B) { floorAwait(b, bigRegistry(false)) })
	b.Run("record=48B", func(b *testing.B) { floorAwait(b, smallRegistry(false)) })
	b.Run("contract/record=896B", func(b *testing.B) { floorAwait(b, bigRegistry(true)) })
	b.Run("contract/record=512B", func(b *testing.B) { floorAwait(b, midRegistry(true)) })
	b.Run("contract/record=48B", func(b *testing.B) { floorAwait(b, smallRegistry(true)) })
}

func floorAwait[R any](b *testing.B, g *floorRegistry[R]) {
	run := immediate("x")
	r := benchpair.Run(b, 256,
		benchpair.Arm{Name: "floor", Run: func(n int) func() {
			for range n {
				if g.await(g.start(run, nil)) != "x" {
					b.Fatal("lost")
				}
			}
			return nil
		}},
		goroutineAwaits(b, run),
	)
	b.ReportMetric(r[0].NsPerOp/r[1].NsPerOp, "x-goroutine")
}

// BenchmarkFloorThroughput: BenchmarkGoalThroughput's shape (100,000
// trivial Works submitted at once through 8 running slots, waited for
// together) for the floor registry, against errgroup.SetLimit(8). The
// metrics are per Work.
func BenchmarkFloorThroughput(b *testing.B) {
	b.Run("record=896B", func(b *testing.B) { floorThroughput(b, bigRegistry(false)) })
	b.Run("record=48B", func(b *testing.B) { floorThroughput(b, smallRegistry(false)) })
	b.Run("contract/record=896B", func(b *testing.B) { floorThroughput(b, bigRegistry(true)) })
	b.Run("contract/record=512B", func(b *testing.B) { floorThroughput(b, midRegistry(true)) })
	b.Run("contract/record=48B", func(b *testing.B) { floorThroughput(b, smallRegistry(true)) })
}

func floorThroughput[R any](b *testing.B, g *floorRegistry[R]) {
	const works = 100_000
	g.slots, g.forget = 8, true
	run := immediate("x")
	var left atomic.Int64
	done := make(chan struct{}, 1)
	after := func() {
		if left.Add(-1) == 0 {
			done <- struct{}{}
		}
	}
	trivial := func() error { _, err := run(context.Background()); return err }
	r := benchpair.Run(b, 1,
		benchpair.Arm{Name: "floor", Run: func(n int) func() {
			for range n {
				left.Store(works)
				for range works {
					g.start(run, after)
				}
				<-done
				g.mu.Lock()
				clear(g.items)
				g.mu.Unlock()
			}
			return nil
		}},
		errgroupThrough(b, works, trivial),
	)
	b.ReportMetric(r[0].NsPerOp/works, "floor-ns/work")
	b.ReportMetric(r[1].NsPerOp/works, "errgroup-ns/work")
	b.ReportMetric(r[0].NsPerOp/r[1].NsPerOp, "x-errgroup")
}
