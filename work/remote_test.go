package work_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentwork/agentwork/work"
)

// A child run by another Engine finds an Execution with the Work's id, a
// scope one level deeper than its owner, its guidance source and no budget.
func TestWithRemote(t *testing.T) {
	calls := 0
	ctx := work.WithRemote(context.Background(), work.Remote{WorkID: "w1", OwnerID: "o",
		Guidance: func() []string { calls++; return []string{"a", "b"} }})
	ex, ok := work.ExecutionFrom(ctx)
	if !ok {
		t.Fatal("no Execution")
	}
	if ex.WorkID() != "w1" || ex.Scope().Depth() != 1 || ex.Scope().ID() != "o/w1" {
		t.Fatalf("WorkID %q, scope %q at %d", ex.WorkID(), ex.Scope().ID(), ex.Scope().Depth())
	}
	if g := ex.Guidance(); len(g) != 2 || g[0] != "a" || calls != 1 {
		t.Fatalf("Guidance = %q after %d calls", g, calls)
	}
	if turn, err := ex.BeginRequest(); err != nil || turn.Final || ex.ToolCallsLeft() != -1 || !ex.BeginToolCall() {
		t.Fatalf("a remote run has a budget: %+v %v", turn, err)
	}
	ctx = work.WithRemote(context.Background(), work.Remote{WorkID: "w2", OwnerID: "o"})
	if ex, _ := work.ExecutionFrom(ctx); ex.Guidance() != nil {
		t.Fatal("Guidance without a source returned messages")
	}
}

func TestErrorDetail(t *testing.T) {
	err := work.ErrLimit.Detail("outstanding limit 2 reached")
	if !errors.Is(err, work.ErrLimit) || err.Error() != "limit exceeded: outstanding limit 2 reached" || err.Code != "limit_exceeded" {
		t.Fatalf("Detail = %q (%s)", err, err.Code)
	}
}

// A Subscription another Engine feeds delivers, drops when full, and
// closes once (calling onClose once) from either side.
func TestNewSubscription(t *testing.T) {
	closed := 0
	sub, publish, closeFn := work.NewSubscription(1, func() { closed++ })
	publish(work.Notice{WorkID: "a"})
	publish(work.Notice{WorkID: "b"}) // buffer full: dropped
	if n := <-sub.C(); n.WorkID != "a" || sub.Dropped() != 1 {
		t.Fatalf("notice %q, dropped %d", n.WorkID, sub.Dropped())
	}
	sub.Close()
	closeFn()
	publish(work.Notice{WorkID: "c"}) // ignored
	if _, ok := <-sub.C(); ok || closed != 1 {
		t.Fatalf("channel open %v, onClose ran %d times", ok, closed)
	}
}
