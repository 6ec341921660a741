package work_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentwork/agentwork/internal/fakeclock"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// The chaos tests run at a scale that finishes in seconds in
// `make test`; AGENTWORK_CHAOS=1 (`make chaos`) runs the long versions.
// Each logs its figures.

var chaos = os.Getenv("AGENTWORK_CHAOS") == "1"

// scale returns quick, or full under AGENTWORK_CHAOS=1.
func scale(quick, full int) int {
	if chaos {
		return full
	}
	return quick
}

func growth(t *testing.T, what string, before, after uint64, objBefore, objAfter uint64, n int, maxBytes, maxObjects int64) {
	t.Helper()
	dB, dO := int64(after)-int64(before), int64(objAfter)-int64(objBefore)
	t.Logf("%s: heap %+d bytes (%.2f B per unit over %d), %+d objects", what, dB, float64(dB)/float64(n), n, dO)
	if dB > maxBytes || dO > maxObjects {
		t.Fatalf("%s: heap grew by %d bytes and %d objects (limit %d bytes, %d objects)", what, dB, dO, maxBytes, maxObjects)
	}
}

// TestChaosChurn: 1M (quick: 10,000) Works start and finish; the heap
// returns to its baseline.
func TestChaosChurn(t *testing.T) {
	total := scale(10_000, 1_000_000)
	const batch, owners = 1000, 16
	obs := terminalSignal{ch: make(chan struct{}, batch)}
	s := work.New(work.WithObserver(obs), work.WithMaxStarts(0), work.WithMaxOutstanding(batch),
		work.WithDefaultBudget(work.Budget{MaxDuration: time.Hour}))
	defer s.Close(context.Background())
	ctx := context.Background()
	run := immediate(strings.Repeat("r", 64))
	round := func() {
		refs := make([]work.Ref, batch)
		for i := range refs {
			o := work.NewOwner(fmt.Sprint("owner-", i%owners))
			ref, err := s.Start(ctx, work.Spec{Owner: o, Target: agent, Run: run})
			if err != nil {
				t.Fatal(err)
			}
			refs[i] = ref
		}
		for range batch {
			<-obs.ch
		}
		for i := 0; i < batch; i += 3 {
			o := work.NewOwner(fmt.Sprint("owner-", i%owners))
			if _, out, err := s.Result(ctx, o, refs[i].ID, 0); err != nil || len(out) != 64 {
				t.Fatalf("result %q %v", out, err)
			}
		}
		for i := range owners {
			s.Release(ctx, work.NewOwner(fmt.Sprint("owner-", i)))
		}
	}
	round()
	round()
	before := heap()
	start := time.Now()
	for range total / batch {
		round()
	}
	elapsed := time.Since(start)
	after := heap()
	if n := censusTotal(s); n != 0 {
		t.Fatalf("registry holds %d", n)
	}
	t.Logf("churn: %d works in %v (%.0f works/s)", total, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds())
	growth(t, "churn", before.HeapAlloc, after.HeapAlloc, before.HeapObjects, after.HeapObjects, total, 1<<20, 2000)
}

// TestChaosManyOwners: 10,000 (quick: 1,000) owners each start Work, read
// and detach some of it and are released; afterwards the registry is empty
// and the heap back at its baseline.
func TestChaosManyOwners(t *testing.T) {
	owners := scale(1_000, 10_000)
	obs := terminalSignal{ch: make(chan struct{}, 3*owners)}
	s := work.New(work.WithObserver(obs))
	defer s.Close(context.Background())
	ctx := context.Background()
	round := func() {
		var refs []work.Ref
		for i := range owners {
			o := work.NewOwner(fmt.Sprint("agent-", i))
			for range 3 {
				ref, err := s.Start(ctx, work.Spec{Owner: o, Target: agent, Run: immediate("out")})
				if err != nil {
					t.Fatal(err)
				}
				refs = append(refs, ref)
			}
		}
		for range refs {
			<-obs.ch
		}
		for i := range owners {
			o := work.NewOwner(fmt.Sprint("agent-", i))
			if l, err := s.List(ctx, o); err != nil || len(l) != 3 {
				t.Fatalf("owner %d lists %d (%v)", i, len(l), err)
			}
			s.Result(ctx, o, refs[3*i].ID, 0)
			s.Detach(ctx, o, refs[3*i+1].ID)
			s.Release(ctx, o)
		}
		if n := censusTotal(s); n != 0 {
			t.Fatalf("registry holds %d after every owner was released", n)
		}
	}
	round()
	before := heap()
	start := time.Now()
	round()
	elapsed := time.Since(start)
	after := heap()
	t.Logf("owners: %d owners x 3 works in %v", owners, elapsed.Round(time.Millisecond))
	growth(t, "owners", before.HeapAlloc, after.HeapAlloc, before.HeapObjects, after.HeapObjects, owners, 256<<10, 1000)
}

// TestChaosSends: 100,000 (quick: 20,000) sends of about 1 KiB to one
// Work, with distinct command ids. The child drains its mailbox at every
// 16th; a third of the sends find it full (refused, nothing stored). While
// the Work runs the heap stays bounded; after it ends and is read, it is
// back at its baseline.
func TestChaosSends(t *testing.T) {
	sends := scale(20_000, 100_000)
	obs := terminalSignal{ch: make(chan struct{}, 1)}
	s := work.New(work.WithObserver(obs))
	defer s.Close(context.Background())
	msg := strings.Repeat("g", 1000)
	exc, finish := make(chan *work.Execution, 1), make(chan struct{})
	run := func(ctx context.Context) (string, error) {
		ex, _ := work.ExecutionFrom(ctx)
		exc <- ex
		<-finish
		return "done", nil
	}
	before := heap()
	ref, err := s.Start(context.Background(), work.Spec{Owner: coord, Target: agent, Run: run})
	if err != nil {
		t.Fatal(err)
	}
	ex := <-exc
	accepted, full := 0, 0
	var mid uint64
	for i := range sends {
		_, err := s.Send(t.Context(), coord, ref.ID, fmt.Sprint("call-", i), msg)
		switch {
		case err == nil:
			accepted++
		case errors.Is(err, work.ErrMailboxFull):
			full++
		default:
			t.Fatal(err)
		}
		if i%48 == 47 { // a model boundary every 48 sends: 16 of them overflow
			boundary.Guidance(ex)
		}
		if i == sends/2 {
			mid = heap().HeapAlloc
		}
	}
	end := heap().HeapAlloc
	t.Logf("sends: %d sends, %d accepted, %d refused as mailbox_full; heap while running %+d bytes at the half, %+d at the end",
		sends, accepted, full, int64(mid)-int64(before.HeapAlloc), int64(end)-int64(before.HeapAlloc))
	if full == 0 || accepted == 0 {
		t.Fatal("the load did not exercise both outcomes")
	}
	if int64(end)-int64(mid) > 64<<10 {
		t.Fatalf("the heap grew by %d bytes over the second half of the sends", int64(end)-int64(mid))
	}
	close(finish)
	<-obs.ch
	if _, out, err := s.Result(context.Background(), coord, ref.ID, 0); err != nil || out != "done" {
		t.Fatal(out, err)
	}
	s.Release(t.Context(), coord)
	after := heap()
	growth(t, "sends", before.HeapAlloc, after.HeapAlloc, before.HeapObjects, after.HeapObjects, sends, 64<<10, 500)
}

// TestChaosResultWaiters: 10,000 (quick: 1,000) Result calls wait on 100
// Works at once; each is woken by its Work's settlement and gets the
// output.
func TestChaosResultWaiters(t *testing.T) {
	waiters := scale(1_000, 10_000)
	const works = 100
	h := newHarness(t, work.WithMaxRunning(works), work.WithMaxOutstanding(works), work.WithMaxStarts(0),
		work.WithRetention(works, 0), work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	refs := make([]work.Ref, works)
	kids := make([]*child, works)
	for i := range refs {
		refs[i], kids[i] = h.running(coord, agent)
	}
	var wg sync.WaitGroup
	var wrong atomic.Int64
	for i := range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, out, err := h.s.Result(context.Background(), coord, refs[i%works].ID, work.MaxResultWait)
			if err != nil || st.State != work.StateCompleted || out != fmt.Sprint("out-", i%works) {
				if wrong.Add(1) == 1 {
					t.Logf("waiter %d: %+v %q %v", i, st, out, err)
				}
			}
		}()
	}
	h.clk.BlockUntil(waiters) // every waiter has its timer: all are waiting
	start := time.Now()
	for i, c := range kids {
		c.complete(fmt.Sprint("out-", i))
	}
	wg.Wait()
	t.Logf("waiters: %d waiters on %d works woken in %v", waiters, works, time.Since(start).Round(time.Microsecond))
	if n := wrong.Load(); n != 0 {
		t.Fatalf("%d waiters got a wrong answer", n)
	}
	if n := h.clk.Pending(); n != 0 {
		t.Fatalf("%d result timers left", n)
	}
}

// TestChaosCancelFinishRaces: 2,000 (quick: 400) times, a cancel races the
// child's own completion or failure. Each Work ends exactly once, in a
// state the contract allows for the pair, and Result agrees with the
// terminal event.
func TestChaosCancelFinishRaces(t *testing.T) {
	races := scale(400, 2_000)
	obs := newObs()
	s := work.New(work.WithObserver(obs), work.WithClock(fakeclock.New(t0)), work.WithMaxStarts(0),
		work.WithMaxOutstanding(races), work.WithMaxRunning(64))
	defer s.Close(context.Background())
	counts := map[string]int{}
	for i := range races {
		gate := make(chan struct{})
		fails := i%2 == 1
		ref, err := s.Start(context.Background(), work.Spec{Owner: coord, Target: agent, Run: func(ctx context.Context) (string, error) {
			<-gate
			if fails {
				return "", errBoom
			}
			return "done", nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		obs.wait(ref.ID, func(evs []observe.Event) bool { return len(evs) >= 2 }) // running
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); s.Cancel(t.Context(), coord, ref.ID) }()
		go func() { defer wg.Done(); close(gate) }()
		wg.Wait()
		ev := obs.waitTerminal(ref.ID)
		switch {
		case fails && ev.To != work.StateFailed:
			t.Fatalf("race %d: a failure ended %s", i, ev.To)
		case !fails && ev.To != work.StateCompleted:
			t.Fatalf("race %d: a completion ended %s", i, ev.To)
		}
		st, out, err := s.Result(context.Background(), coord, ref.ID, 0)
		if err != nil || st.State != ev.To || (ev.To == work.StateCompleted) != (out == "done") {
			t.Fatalf("race %d: result %+v %q %v after %s", i, st, out, err, ev.To)
		}
		terminals := 0
		for _, e := range obs.events(ref.ID) {
			if e.To.Terminal() {
				terminals++
			}
			counts[string(e.Type)]++
		}
		if terminals != 1 {
			t.Fatalf("race %d: %d terminal events", i, terminals)
		}
		s.Detach(t.Context(), coord, ref.ID)
	}
	t.Logf("races: %d cancel/finish races; events %v", races, counts)
	if n := censusTotal(s); n != 0 {
		t.Fatalf("registry holds %d", n)
	}
}

// TestChaosCloseUnderLoad: Close with running children that ignore their
// context (and a deep queue) gives up on its deadline without leaving a
// goroutine, cancels everything, and returns nil once the children return.
func TestChaosCloseUnderLoad(t *testing.T) {
	stubborn := scale(200, 2_000)
	s := work.New(work.WithMaxRunning(stubborn), work.WithMaxOutstanding(1<<20), work.WithMaxStarts(0))
	release := make(chan struct{})
	entered := make(chan struct{}, stubborn)
	ignore := func(context.Context) (string, error) { entered <- struct{}{}; <-release; return "late", nil }
	for i := range stubborn {
		if _, err := s.Start(context.Background(), work.Spec{Owner: work.NewOwner(fmt.Sprint("o", i%50)), Target: agent, Run: ignore}); err != nil {
			t.Fatal(err)
		}
	}
	for range stubborn {
		<-entered
	}
	for i := range stubborn { // queued behind them
		s.Start(context.Background(), work.Spec{Owner: work.NewOwner(fmt.Sprint("q", i%50)), Target: agent, Run: ignore})
	}
	before := goleak.IgnoreCurrent()
	start := time.Now()
	for range 10 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		if err := s.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Close = %v", err)
		}
		cancel()
	}
	if err := goleak.Find(before); err != nil {
		t.Fatalf("timed-out Close calls left goroutines: %v", err)
	}
	c := census(s)
	if c[work.StateCancelRequested] != stubborn || c[work.StateCancelled] != stubborn {
		t.Fatalf("census after Close: %v", c)
	}
	close(release)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Logf("close: %d stubborn children + %d queued; 10 timed-out Close calls; drained in %v; census %v",
		stubborn, stubborn, time.Since(start).Round(time.Millisecond), census(s))
}

// TestChaosWaitingTrees: many coordinators' children build random trees
// (up to the depth limit) whose nodes, agents that pass their model-request
// boundary before starting children and after each wait, wait on their
// children with short real timeouts, on a small pool. Every tree finishes;
// at every child's start no more children execute than MaxRunning.
func TestChaosWaitingTrees(t *testing.T) {
	trees := scale(30, 400)
	const maxRunning = 3
	s := work.New(work.WithMaxRunning(maxRunning), work.WithMaxStarts(0))
	defer s.Close(context.Background())
	var over, nodes atomic.Int64
	var node func(seed uint64, depth int) work.RunFunc
	node = func(seed uint64, depth int) work.RunFunc {
		return func(ctx context.Context) (string, error) {
			nodes.Add(1)
			if _, executing, _ := s.SlotsForTest(); executing > maxRunning {
				over.Add(1)
			}
			r := rand.New(rand.NewPCG(seed, uint64(depth)))
			ex, _ := work.ExecutionFrom(ctx)
			boundary.BeginRequest(ex)
			if depth == 0 {
				return "leaf", nil
			}
			var refs []work.Ref
			for i := range r.IntN(4) {
				ref, err := s.Start(ctx, work.Spec{Owner: ex.Scope(), Target: agent, Run: node(seed*31+uint64(i), depth-1)})
				if err != nil {
					return "", err
				}
				refs = append(refs, ref)
			}
			for _, ref := range refs {
				for {
					timeout := time.Duration(r.IntN(3)) * time.Millisecond
					st, _, err := s.Result(ctx, ex.Scope(), ref.ID, timeout)
					if err != nil {
						return "", err
					}
					boundary.BeginRequest(ex) // the agent's next model request
					if st.State.Terminal() {
						break
					}
				}
			}
			return "node", nil
		}
	}
	var wg sync.WaitGroup
	start := time.Now()
	for i := range trees {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := work.NewOwner(fmt.Sprint("coord-", i))
			ref, err := s.Start(context.Background(), work.Spec{Owner: o, Target: agent, Run: node(uint64(i), 3)})
			if err != nil {
				t.Error(err)
				return
			}
			for {
				st, _, err := s.Result(context.Background(), o, ref.ID, work.MaxResultWait)
				if err != nil || st.State.Terminal() {
					if st.State != work.StateCompleted {
						t.Errorf("tree %d ended %s (%v)", i, st.State, err)
					}
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	guard(t, done, "waiting trees")
	t.Logf("trees: %d trees, %d nodes on %d slots in %v", trees, nodes.Load(), maxRunning, time.Since(start).Round(time.Millisecond))
	if n := over.Load(); n != 0 {
		t.Fatalf("%d times more than %d children executed", n, maxRunning)
	}
	if used, executing, reclaiming := s.SlotsForTest(); used != 0 || executing != 0 || reclaiming != 0 {
		t.Fatalf("after the trees: %d used, %d executing, %d reclaiming", used, executing, reclaiming)
	}
}

// checkObs checks each Work's event stream as it is delivered: one
// terminal event, nothing but detached, result-read and orphaned after it.
type checkObs struct {
	observe.NopObserver
	mu       sync.Mutex
	terminal map[string]bool
	errs     []string
}

func (c *checkObs) Event(_ context.Context, e observe.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.WorkID == "" {
		return
	}
	if c.terminal[e.WorkID] {
		switch e.Type {
		case observe.EventDetached, observe.EventResultRead, observe.EventOrphaned:
		default:
			c.errs = append(c.errs, fmt.Sprintf("%s: %s after the terminal event", e.WorkID, e.Type))
		}
	}
	if e.To.Terminal() {
		c.terminal[e.WorkID] = true
	}
}

func (c *checkObs) seen(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.terminal[id]
}

func TestConcurrentOperations(t *testing.T) {
	for round := range 3 {
		t.Run(fmt.Sprint(round), func(t *testing.T) { concurrentOperationsRound(t) })
	}
}

func concurrentOperationsRound(t *testing.T) {
	ob := &checkObs{terminal: make(map[string]bool)}
	s := work.New(work.WithObserver(ob), work.WithMaxRunning(3), work.WithMaxOutstanding(1000),
		work.WithMaxStarts(0), work.WithRetention(1000, 0))
	ctx := context.Background()
	const owners, per = 4, 40
	var wg sync.WaitGroup
	var emu sync.Mutex
	var errs []string
	fail := func(f string, a ...any) {
		emu.Lock()
		errs = append(errs, fmt.Sprintf(f, a...))
		emu.Unlock()
	}
	for oi := range owners {
		o := work.NewOwner(fmt.Sprint("o", oi))
		for range per {
			kind := rand.IntN(6)
			d := time.Duration(rand.IntN(20)+1) * time.Millisecond
			run := func(ctx context.Context) (string, error) {
				switch kind {
				case 0:
					return "ok", nil
				case 1:
					return "", errors.New("x")
				case 2:
					panic("p")
				case 3:
					runtime.Goexit()
				case 4:
					<-ctx.Done()
					return "", ctx.Err()
				}
				t := time.NewTimer(time.Duration(rand.IntN(3)) * time.Millisecond)
				defer t.Stop()
				select {
				case <-t.C:
					return "late", nil
				case <-ctx.Done():
					return "", context.Cause(ctx)
				}
			}
			ref, err := s.Start(ctx, work.Spec{Owner: o, Target: agent, Budget: work.Budget{MaxDuration: d}, Run: run})
			if err != nil {
				t.Fatal(err)
			}
			for w := range 1 + rand.IntN(3) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					switch op := rand.IntN(5); {
					case op == 0 && w == 0:
						_, _ = s.Cancel(ctx, o, ref.ID)
					case op == 1 && w == 0:
						_, _ = s.Detach(ctx, o, ref.ID)
					default:
						rctx, cancel := context.WithTimeout(ctx, time.Duration(rand.IntN(4))*time.Millisecond)
						defer cancel()
						timeout := []time.Duration{0, time.Millisecond, 3 * time.Millisecond, time.Second}[rand.IntN(4)]
						st, _, err := s.Result(rctx, o, ref.ID, timeout)
						if err == nil && st.State.Terminal() && !ob.seen(ref.ID) {
							fail("%s: Result reported %s before the Observer saw it", ref.ID, st.State)
						}
					}
				}()
			}
		}
	}
	wg.Wait()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	ob.mu.Lock()
	errs = append(errs, ob.errs...)
	ob.mu.Unlock()
	for _, e := range errs {
		t.Error(e)
	}
}
