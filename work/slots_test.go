package work_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// guard fails the test when ch does not deliver within a generous bound.
// It is a failure bound for a deadlock, not synchronisation: every test
// here completes without the clock moving.
func guard[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: stalled (the running pool deadlocked)", what)
		panic("unreachable")
	}
}

// waitingChain returns a child that starts the next level in its own scope
// and waits for its result (depth > 0), or, as the leaf, reports itself
// and blocks until release is closed.
func waitingChain(s *work.Engine, depth int, leaf chan<- struct{}, release <-chan struct{}) work.RunFunc {
	return func(ctx context.Context) (string, error) {
		if depth == 0 {
			leaf <- struct{}{}
			select {
			case <-release:
				return "leaf", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		ex, _ := work.ExecutionFrom(ctx)
		ref, err := s.Start(ctx, work.Spec{Owner: ex.Scope(), Target: agent, Run: waitingChain(s, depth-1, leaf, release)})
		if err != nil {
			return "", err
		}
		st, out, err := s.Result(ctx, ex.Scope(), ref.ID, work.MaxResultWait)
		if err != nil {
			return "", err
		}
		if st.State != work.StateCompleted {
			return "", fmt.Errorf("level %d: child ended %s", depth, st.State)
		}
		return out + "<", nil
	}
}

// TestAncestorsWaitingOnDescendantsNeverStall: a coordinator's child waits
// on a grandchild that waits on a great-grandchild, each with the longest
// result wait, while every other pool slot is held by other owners' Work
// and more of it is queued. Every level runs without the clock moving; the
// other owners' queued Work does not run on the lent slots; at no moment
// do more children execute than MaxRunning.
func TestAncestorsWaitingOnDescendantsNeverStall(t *testing.T) {
	for _, maxRunning := range []int{1, 2, 8} {
		t.Run(fmt.Sprint("MaxRunning=", maxRunning), func(t *testing.T) {
			h := newHarness(t, work.WithMaxRunning(maxRunning))
			for i := range maxRunning - 1 {
				h.running(work.NewOwner(fmt.Sprint("blocker-", i)), fn)
			}
			leaf, release := make(chan struct{}), make(chan struct{})
			ref, err := h.s.Start(t.Context(), work.Spec{Owner: coord, Target: agent, Run: waitingChain(h.s, 3, leaf, release)})
			if err != nil {
				t.Fatal(err)
			}
			// The pool is now full; other owners' Work queues behind it.
			queued := make([]*child, 3)
			for i := range queued {
				queued[i] = h.child()
				h.start(work.NewOwner(fmt.Sprint("other-", i)), fn, queued[i])
			}
			guard(t, leaf, "great-grandchild")
			used, executing, _ := h.s.SlotsForTest()
			if executing > maxRunning || used > maxRunning {
				t.Fatalf("%d executing on %d pool slots, limit %d", executing, used, maxRunning)
			}
			for i, c := range queued {
				select {
				case <-c.started:
					t.Fatalf("other owner's queued Work %d ran on a lent slot", i)
				default:
				}
			}
			close(release)
			res := make(chan string, 1)
			go func() {
				_, out, _ := h.s.Result(context.Background(), coord, ref.ID, work.MaxResultWait)
				res <- out
			}()
			if out := guard(t, res, "coordinator's result"); out != "leaf<<<" {
				t.Fatalf("coordinator got %q", out)
			}
			// The chain's pool slot goes back to the fair order.
			guard(t, queued[0].started, "the first queued owner")
			if now := h.clk.Now(); !now.Equal(t0) {
				t.Fatalf("the clock moved to %v", now)
			}
		})
	}
}

// TestWaitingCoordinatorsAtDefaults: as many children as the default pool
// holds each start a grandchild and wait for it (8 waiting
// parents; and 2 at MaxRunning 2). Every grandchild runs at once, without
// the clock moving (no 30 s steps), and everything finishes when the
// grandchildren do.
func TestWaitingCoordinatorsAtDefaults(t *testing.T) {
	for _, tc := range []struct {
		name         string
		opts         []work.Option
		coordinators int
	}{
		{"defaults", nil, work.DefaultMaxRunning},
		{"MaxRunning=2", []work.Option{work.WithMaxRunning(2)}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.opts...)
			leaf, release := make(chan struct{}), make(chan struct{})
			refs := make([]work.Ref, tc.coordinators)
			for i := range refs {
				ref, err := h.s.Start(t.Context(), work.Spec{Owner: work.NewOwner(fmt.Sprint("coord-", i)), Target: agent,
					Run: waitingChain(h.s, 1, leaf, release)})
				if err != nil {
					t.Fatal(err)
				}
				refs[i] = ref
			}
			for i := range refs {
				guard(t, leaf, fmt.Sprint("grandchild ", i))
			}
			if used, executing, _ := h.s.SlotsForTest(); used != tc.coordinators || executing != tc.coordinators {
				t.Fatalf("%d pool slots, %d executing; want %d of each", used, executing, tc.coordinators)
			}
			// Operators see the pool slots, not one per waiting ancestor.
			snap, _ := h.s.Snapshot(context.Background())
			if snap.SlotsInUse != tc.coordinators {
				t.Fatalf("Snapshot.SlotsInUse = %d, want %d (waiting ancestors lend theirs)", snap.SlotsInUse, tc.coordinators)
			}
			// Per target, a lent slot counts once too (for its chain's
			// first Work's target).
			perTarget := 0
			for _, c := range snap.Counts {
				perTarget += c.SlotsInUse
			}
			if perTarget != snap.SlotsInUse {
				t.Fatalf("slots per target sum to %d, Snapshot.SlotsInUse = %d", perTarget, snap.SlotsInUse)
			}
			lending := 0
			for _, w := range snap.Live {
				if w.Lending {
					lending++
				}
			}
			if lending != tc.coordinators {
				t.Fatalf("%d live Works lending, want %d", lending, tc.coordinators)
			}
			close(release)
			for i, ref := range refs {
				res := make(chan string, 1)
				go func() {
					_, out, _ := h.s.Result(context.Background(), work.NewOwner(fmt.Sprint("coord-", i)), ref.ID, work.MaxResultWait)
					res <- out
				}()
				if out := guard(t, res, "result"); out != "leaf<" {
					t.Fatalf("coordinator %d got %q", i, out)
				}
			}
			if now := h.clk.Now(); !now.Equal(t0) {
				t.Fatalf("the clock moved to %v", now)
			}
			if used, executing, _ := h.s.SlotsForTest(); used != 0 || executing != 0 {
				t.Fatalf("%d pool slots, %d executing after the end", used, executing)
			}
		})
	}
}

// startIn starts a controlled child in c's scope.
func (h *harness) startIn(c *child, target work.Target) (work.Ref, *child) {
	h.t.Helper()
	<-c.started
	k := h.child()
	ref, err := h.s.Start(context.Background(), work.Spec{Owner: c.ex.Scope(), Target: target, Run: k.run})
	if err != nil {
		h.t.Fatalf("Start in scope: %v", err)
	}
	return ref, k
}

type waited struct {
	st  observe.State
	out string
}

// waitIn makes c wait (on a goroutine of the test, standing in for the
// child's own) for id in its scope with timeout and ctx.
func (h *harness) waitIn(ctx context.Context, c *child, id string, timeout time.Duration) <-chan waited {
	ch := make(chan waited, 1)
	go func() {
		st, out, err := h.s.Result(ctx, c.ex.Scope(), id, timeout)
		if err != nil {
			h.t.Errorf("Result: %v", err)
		}
		ch <- waited{st.State, out}
	}()
	return ch
}

func (h *harness) slots(wantUsed, wantExecuting, wantReclaiming int) {
	h.t.Helper()
	used, executing, reclaiming := h.s.SlotsForTest()
	if used != wantUsed || executing != wantExecuting || reclaiming != wantReclaiming {
		h.t.Fatalf("slots: %d used, %d executing, %d reclaiming; want %d, %d, %d",
			used, executing, reclaiming, wantUsed, wantExecuting, wantReclaiming)
	}
}

// passBoundary makes c pass its model-request boundary (as its agent adapter
// does before each model request) on a goroutine of the test; the channel
// closes when BeginRequest returns.
func passBoundary(c *child) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		boundary.BeginRequest(c.ex)
		close(ch)
	}()
	return ch
}

// boundaryWaits returns a channel that receives each time a model-request
// boundary of h's engine starts waiting for its Work's slot.
func boundaryWaits(h *harness) <-chan struct{} {
	ch := make(chan struct{}, 8)
	h.s.SetBoundaryHookForTest(func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	})
	return ch
}

// TestLentSlotReclaim: a waiter's Result returns at its timeout even while
// a descendant still runs on its lent slot. Its Work is then owed a slot:
// an agent child (one that uses the model-request boundary) waits for it
// at its next BeginRequest, until the borrower ends, another pool slot
// frees first, or its context ends; a function child runs over the limit
// while nothing new is dispatched.
func TestLentSlotReclaim(t *testing.T) {
	t.Run("borrower ends", func(t *testing.T) {
		h := newHarness(t, work.WithMaxRunning(1))
		waits := boundaryWaits(h)
		_, a := h.running(coord, agent)
		guard(t, passBoundary(a), "a's first model request")
		bRef, b := h.startIn(a, agent)
		res := h.waitIn(context.Background(), a, bRef.ID, time.Second)
		<-b.started // b runs on a's lent slot
		h.slots(1, 1, 0)
		// The deadlines of the running Works and the wait.
		h.clk.BlockUntil(3)
		h.clk.Advance(time.Second) // a's wait times out; b still runs
		if w := guard(t, res, "Result at its timeout"); w.st != work.StateRunning {
			t.Fatalf("result at the timeout: %+v", w)
		}
		h.slots(1, 1, 1) // a is owed its slot
		req := passBoundary(a)
		guard(t, waits, "a's boundary waiting for its slot")
		select {
		case <-req:
			t.Fatal("a's model request went ahead while its slot was lent")
		default:
		}
		b.complete("late")
		guard(t, req, "a's model request after its borrower ended")
		h.slots(1, 1, 0)
		a.complete("")
	})
	t.Run("pool slot frees first", func(t *testing.T) {
		h := newHarness(t, work.WithMaxRunning(2))
		waits := boundaryWaits(h)
		_, a := h.running(coord, agent)
		guard(t, passBoundary(a), "a's first model request")
		_, other := h.running(work.NewOwner("other"), fn)
		bRef, b := h.startIn(a, agent)
		res := h.waitIn(context.Background(), a, bRef.ID, time.Second)
		<-b.started
		// The deadlines of the running Works and the wait.
		h.clk.BlockUntil(4)
		h.clk.Advance(time.Second)
		if w := guard(t, res, "Result at its timeout"); w.st != work.StateRunning {
			t.Fatalf("result = %+v", w)
		}
		req := passBoundary(a)
		guard(t, waits, "a's boundary waiting for its slot")
		other.complete("") // a pool slot frees: a takes it, b keeps a's old one
		guard(t, req, "a's model request on the freed slot")
		h.slots(2, 2, 0)
		b.complete("")
		h.obs.waitTerminal(bRef.ID)
		h.slots(1, 1, 0)
		a.complete("")
	})
	t.Run("context ends", func(t *testing.T) {
		h := newHarness(t, work.WithMaxRunning(1))
		waits := boundaryWaits(h)
		aRef, a := h.running(coord, agent)
		guard(t, passBoundary(a), "a's first model request")
		bRef, b := h.startIn(a, agent)
		res := h.waitIn(context.Background(), a, bRef.ID, time.Second)
		<-b.started
		// The deadlines of the running Works and the wait.
		h.clk.BlockUntil(3)
		h.clk.Advance(time.Second)
		guard(t, res, "Result at its timeout")
		req := passBoundary(a)
		guard(t, waits, "a's boundary waiting for its slot")
		if _, err := h.s.Cancel(t.Context(), coord, aRef.ID); err != nil {
			t.Fatal(err)
		}
		guard(t, req, "a's model request once its context ended")
		// a runs over the limit until a slot frees; nothing new starts.
		h.overLimit(a, b, bRef)
	})
	t.Run("function child", func(t *testing.T) {
		h := newHarness(t, work.WithMaxRunning(1))
		_, a := h.running(coord, fn)
		bRef, b := h.startIn(a, agent)
		res := h.waitIn(context.Background(), a, bRef.ID, time.Second)
		<-b.started
		// The deadlines of the running Works and the wait.
		h.clk.BlockUntil(3)
		h.clk.Advance(time.Second)
		if w := guard(t, res, "Result at its timeout"); w.st != work.StateRunning {
			t.Fatalf("result = %+v", w)
		}
		// No boundary to wait at: a runs over the limit at once, and
		// nothing new starts until the pool is below it again.
		h.overLimit(a, b, bRef)
	})
}

// overLimit checks a pool of limit 1 run over it by a (which took its slot
// back) and its borrower b: a Work queued meanwhile starts only once both
// have ended, not when b alone ends.
func (h *harness) overLimit(a, b *child, bRef work.Ref) {
	h.t.Helper()
	h.slots(2, 2, 0)
	q := h.child()
	h.start(work.NewOwner("other"), fn, q)
	b.complete("")
	h.obs.waitTerminal(bRef.ID)
	h.slots(1, 1, 0)
	select {
	case <-q.started:
		h.t.Fatal("queued Work started while the pool was over its limit")
	default:
	}
	a.complete("")
	guard(h.t, q.started, "queued Work after the pool drained")
}

// TestLendingCountsWaiters: two goroutines of one child wait on two
// descendants, the first with a short timeout. When it returns, the slot
// stays lent for the second: the second descendant runs as soon as the
// first ends, and the second wait gets its result without the clock
// reaching its timeout.
func TestLendingCountsWaiters(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(1))
	_, a := h.running(coord, agent)
	g1Ref, g1 := h.startIn(a, agent)
	g2Ref, g2 := h.startIn(a, agent)
	resA := h.waitIn(context.Background(), a, g1Ref.ID, time.Second)
	<-g1.started // g1 runs on a's lent slot
	resB := h.waitIn(context.Background(), a, g2Ref.ID, 10*time.Second)
	// The deadlines of a and g1, and both waits.
	h.clk.BlockUntil(4)
	h.clk.Advance(time.Second) // A's wait times out; B still waits
	if w := guard(t, resA, "first wait"); w.st != work.StateRunning {
		t.Fatalf("first wait = %+v", w)
	}
	h.slots(1, 1, 0) // still lent for B: a is not owed a slot
	g1.complete("")
	guard(t, g2.started, "the second waiter's descendant on the lent slot")
	g2.complete("second")
	if w := guard(t, resB, "second wait"); w.st != work.StateCompleted || w.out != "second" {
		t.Fatalf("second wait = %+v", w)
	}
	h.slots(1, 1, 0)
	a.complete("")
}

// TestForegroundBoundaryReclaims: a foreground agent call inside a child
// runs on that child's slot. When its wait times out while a descendant
// runs on the lent slot, its Result returns, and its next model request
// waits until the child has a slot again.
func TestForegroundBoundaryReclaims(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(1))
	waits := boundaryWaits(h)
	_, a := h.running(coord, agent)
	b := h.child()
	reqDone := make(chan struct{})
	called := make(chan error, 1)
	go func() {
		_, err := h.s.Call(context.Background(), work.Spec{Owner: a.ex.Scope(), Target: agent, Run: func(ctx context.Context) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			boundary.BeginRequest(ex)
			ref, err := h.s.Start(ctx, work.Spec{Owner: ex.Scope(), Target: fn, Run: b.run})
			if err != nil {
				return "", err
			}
			if st, _, err := h.s.Result(ctx, ex.Scope(), ref.ID, time.Second); err != nil || st.State != work.StateRunning {
				return "", fmt.Errorf("result: %v %v", st.State, err)
			}
			boundary.BeginRequest(ex)
			close(reqDone)
			return "", nil
		}})
		called <- err
	}()
	<-b.started // b runs on a's lent slot
	h.slots(1, 1, 0)
	// The deadlines of a, the call and b, and the wait.
	h.clk.BlockUntil(4)
	h.clk.Advance(time.Second)
	guard(t, waits, "the foreground call's boundary waiting for a's slot")
	select {
	case <-reqDone:
		t.Fatal("the model request went ahead while a's slot was lent")
	default:
	}
	h.slots(1, 1, 1)
	b.complete("")
	guard(t, reqDone, "the model request after the borrower ended")
	if err := guard(t, called, "the foreground call"); err != nil {
		t.Fatal(err)
	}
	h.slots(1, 1, 0)
	a.complete("")
}
