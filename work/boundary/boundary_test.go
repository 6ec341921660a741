package boundary_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/observe"
)

// An adapter's loop: each model request passes BeginRequest (the last
// one is final once the turns are used up), each tool call BeginToolCall,
// and each response reports its tokens with EndRequest.
func Example() {
	s := work.New()
	defer s.Close(context.Background())
	o := work.NewOwner("coordinator")
	ref, err := s.Start(context.Background(), work.Spec{Owner: o,
		Target: work.Target{Label: "researcher", Kind: work.KindAgent},
		Budget: work.Budget{MaxTurns: 2},
		Run: func(ctx context.Context) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			for {
				turn, err := boundary.BeginRequest(ex)
				if err != nil {
					return "", err
				}
				// ... send the request (with no tools when turn.Final) ...
				boundary.EndRequest(ex, 100, 20, true)
				if turn.Final {
					return "final answer (" + turn.Budget + " ran out)", nil
				}
				if boundary.BeginToolCall(ex) {
					// ... run the tool the model asked for ...
				}
			}
		}})
	if err != nil {
		fmt.Println(err)
		return
	}
	st, out, _ := s.Result(context.Background(), o, ref.ID, work.MaxResultWait)
	fmt.Println(st.State, out)
	// Output: completed final answer (turns ran out)
}

// TestOutsideChild: with no Execution (a nil one) every function answers
// as outside a child run: the zero Turn, no limit, true, nothing.
func TestOutsideChild(t *testing.T) {
	var ex *work.Execution
	if turn, err := boundary.BeginRequest(ex); turn != (boundary.Turn{}) || err != nil {
		t.Fatalf("BeginRequest(nil) = %+v, %v", turn, err)
	}
	boundary.EndRequest(ex, 1, 2, true)
	if n := boundary.ToolCallsLeft(ex); n != -1 {
		t.Fatalf("ToolCallsLeft(nil) = %d, want -1", n)
	}
	if !boundary.BeginToolCall(ex) {
		t.Fatal("BeginToolCall(nil) = false")
	}
	if g, u := boundary.Guidance(ex), boundary.Unanswered(ex); g != nil || u != nil {
		t.Fatalf("Guidance, Unanswered (nil) = %v, %v", g, u)
	}
}

// TestBudgetAndAllocations: in a child run the boundary counts and
// enforces the budget, refuses after the final request, and its ordinary
// path allocates nothing.
func TestBudgetAndAllocations(t *testing.T) {
	s := work.New()
	defer s.Close(context.Background())
	o := work.NewOwner("o")
	type seen struct {
		allocs      float64
		left, after int
		refused     error
		final       boundary.Turn
	}
	ch := make(chan seen, 1)
	ref, err := s.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "a", Kind: work.KindAgent},
		Budget: work.Budget{MaxTurns: 1000, MaxToolCalls: 3},
		Run: func(ctx context.Context) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			var sn seen
			sn.allocs = testing.AllocsPerRun(100, func() {
				_, _ = boundary.BeginRequest(ex)
				boundary.EndRequest(ex, 1, 1, true)
				_ = boundary.ToolCallsLeft(ex)
			})
			sn.left = boundary.ToolCallsLeft(ex)
			for boundary.BeginToolCall(ex) {
			}
			sn.after = boundary.ToolCallsLeft(ex)
			sn.final, _ = boundary.BeginRequest(ex)
			_, sn.refused = boundary.BeginRequest(ex)
			ch <- sn
			return "", nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	sn := <-ch
	if _, _, err := s.Result(context.Background(), o, ref.ID, work.MaxResultWait); err != nil {
		t.Fatal(err)
	}
	if sn.allocs != 0 {
		t.Errorf("the ordinary boundary allocates %.1f times", sn.allocs)
	}
	if sn.left != 3 || sn.after != 0 {
		t.Errorf("ToolCallsLeft = %d before, %d after the calls; want 3, 0", sn.left, sn.after)
	}
	if !sn.final.Final || sn.final.Budget != observe.BudgetToolCalls {
		t.Errorf("the request after the tool calls ran out = %+v, want final on tool_calls", sn.final)
	}
	if !errors.Is(sn.refused, work.ErrBudgetExhausted) {
		t.Errorf("the request after the final one = %v, want ErrBudgetExhausted", sn.refused)
	}
}

// TestCallError: the error a foreground call would have returned for a
// Work that ended in each state.
func TestCallError(t *testing.T) {
	var we *work.Error
	if err := boundary.CallError(work.Status{State: work.StateFailed, Class: work.ClassPanic}); !errors.Is(err, work.ErrChildFailed) ||
		!errors.As(err, &we) || we.Class != work.ClassPanic {
		t.Fatalf("failed (panic) = %v", err)
	}
	if err := boundary.CallError(work.Status{State: work.StateFailed}); !errors.As(err, &we) || we.Class != work.ClassError {
		t.Fatalf("failed with no class = %v, want class %q", err, work.ClassError)
	}
	if err := boundary.CallError(work.Status{State: work.StateCancelled}); !errors.Is(err, work.ErrCancelled) {
		t.Fatalf("cancelled = %v", err)
	}
	for _, s := range []observe.State{work.StateCompleted, work.StateRunning, work.StateQueued, ""} {
		if err := boundary.CallError(work.Status{State: s}); err != nil {
			t.Fatalf("%q = %v, want nil", s, err)
		}
	}
}

// TestMaxRows: the documented bound is the one the engines apply.
func TestMaxRows(t *testing.T) {
	if boundary.MaxRows != contract.MaxRows {
		t.Fatalf("boundary.MaxRows %d, the engines' %d", boundary.MaxRows, contract.MaxRows)
	}
}

// TestEngineReadsAllocateNothing: the engine's reads cross into work with
// nothing boxed: Live and Rows of an owner with no Work allocate nothing.
func TestEngineReadsAllocateNothing(t *testing.T) {
	e := work.New()
	defer e.Close(context.Background())
	ctx, o := context.Background(), work.NewOwner("idle")
	if n := testing.AllocsPerRun(100, func() {
		_, _ = boundary.Live(ctx, e, o)
		_, _, _ = boundary.Rows(ctx, e, o)
		_ = boundary.Now(e)
		_ = boundary.Observer(e)
	}); n != 0 {
		t.Fatalf("%v allocations per Live, Rows, Now and Observer; want 0", n)
	}
}
