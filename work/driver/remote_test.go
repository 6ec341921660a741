package driver_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// A child run by another Engine finds an Execution with the Work's id, a
// scope one level deeper than its owner, its guidance source and no budget.
func TestWithRemote(t *testing.T) {
	calls := 0
	ctx := driver.WithRemote(context.Background(), driver.Remote{WorkID: "w1", OwnerID: "o",
		Guidance: func() []string { calls++; return []string{"a", "b"} }})
	ex, ok := work.ExecutionFrom(ctx)
	if !ok {
		t.Fatal("no Execution")
	}
	if ex.WorkID() != "w1" || ex.Scope().Depth() != 1 || ex.Scope().ID() != "o/w1" {
		t.Fatalf("WorkID %q, scope %q at %d", ex.WorkID(), ex.Scope().ID(), ex.Scope().Depth())
	}
	if g := boundary.Guidance(ex); len(g) != 2 || g[0] != "a" || calls != 1 {
		t.Fatalf("Guidance = %q after %d calls", g, calls)
	}
	if turn, err := boundary.BeginRequest(ex); err != nil || turn.Final || boundary.ToolCallsLeft(ex) != -1 || !boundary.BeginToolCall(ex) {
		t.Fatalf("a remote run has a budget: %+v %v", turn, err)
	}
	ctx = driver.WithRemote(context.Background(), driver.Remote{WorkID: "w2", OwnerID: "o"})
	if ex, _ := work.ExecutionFrom(ctx); boundary.Guidance(ex) != nil {
		t.Fatal("Guidance without a source returned messages")
	}
}

// TestRemoteUpdateHooks: under another Engine, Remote.Update decides,
// the Execution reports EventUpdate through Remote.Event, and a question
// waits through Remote.AwaitAnswer at the next boundary.
func TestRemoteUpdateHooks(t *testing.T) {
	var evs []observe.Event
	log := driver.NewUpdateLog(work.UpdatePolicy{MaxUpdates: 2})
	answered := make(chan bool, 4)
	var guidance []string
	ctx := driver.WithRemote(context.Background(), driver.Remote{WorkID: "w1", OwnerID: "o",
		Event: func(e observe.Event) { evs = append(evs, e) },
		Update: func(key string, value []byte, question bool) (work.UpdateReceipt, string) {
			return log.Accept(key, value, question, logT0)
		},
		AwaitAnswer: func(ctx context.Context) bool {
			ok := <-answered
			if ok {
				guidance = []string{"the answer"}
			}
			return ok
		},
		Guidance: func() []string { g := guidance; guidance = nil; return g },
	})
	ex, _ := work.ExecutionFrom(ctx)
	if rec, err := work.ReportUpdate(ctx, "q", []byte(`"?"`), true); err != nil || rec.Seq != 1 {
		t.Fatalf("remote question = %+v, %v", rec, err)
	}
	answered <- true
	if _, err := boundary.BeginRequest(ex); err != nil {
		t.Fatal(err)
	}
	if g := boundary.Guidance(ex); strings.Join(g, "") != "the answer" || boundary.Unanswered(ex) != nil {
		t.Fatalf("after the answer: guidance %q", g)
	}
	if len(answered) != 0 {
		t.Fatal("BeginRequest did not wait through AwaitAnswer")
	}
	// No question open: no wait (AwaitAnswer would block on the empty channel).
	if _, err := boundary.BeginRequest(ex); err != nil {
		t.Fatal(err)
	}
	if _, err := work.ReportUpdate(ctx, "q2", []byte(`"??"`), true); err != nil {
		t.Fatal(err)
	}
	answered <- false
	if _, err := boundary.BeginRequest(ex); err != nil {
		t.Fatal(err)
	}
	if got := boundary.Unanswered(ex); fmt.Sprint(got) != "[2]" {
		t.Fatalf("Unanswered() = %v, want [2]", got)
	}
	if _, err := work.ReportUpdate(ctx, "x", []byte(`1`), false); !isRefusal(err, observe.UpdateRefusedCount) {
		t.Fatalf("over the count: %v", err)
	}
	var ups []observe.Event // the granted requests' progress counts aside
	for _, e := range evs {
		if e.Type != observe.EventProgress {
			ups = append(ups, e)
		}
	}
	if len(ups) != 3 || ups[0].Type != observe.EventUpdate || ups[0].WorkID != "w1" || ups[0].Seq != 1 ||
		ups[2].ErrorClass != observe.UpdateRefusedCount || ups[2].Time.IsZero() {
		t.Fatalf("remote events = %+v", evs)
	}
	// A function child under another Engine.
	if rec, err := work.ReportUpdate(ctx, "q", []byte(`"?"`), true); err != nil || !rec.Duplicate || rec.Seq != 1 { // a duplicate: nothing opens
		t.Fatalf("a repeated question = %+v, %v; want the first receipt, a duplicate", rec, err)
	}
	if g, err := work.AwaitAnswer(ctx); g != nil || err != nil {
		t.Fatalf("AwaitAnswer with no question open = %q, %v", g, err)
	}
	// No hooks: not declared.
	bare := driver.WithRemote(context.Background(), driver.Remote{WorkID: "w2", OwnerID: "o"})
	if _, err := work.ReportUpdate(bare, "k", []byte(`1`), false); !isRefusal(err, observe.UpdateRefusedNotDeclared) {
		t.Fatalf("a Remote without Update: %v", err)
	}
}

// isRefusal reports whether err is the update refusal of reason.
func isRefusal(err error, reason string) bool {
	var we *work.Error
	return errors.Is(err, work.ErrUpdateRefused) && errors.As(err, &we) && we.Class == reason
}

// TestWithRemoteBudget: WithRemote gives the child the Remote's Budget
// (its turns counted at the boundary, FailOnBudget refusing the request
// past them), and what the run refused is what Classify reads; a nil
// Execution refused nothing.
func TestWithRemoteBudget(t *testing.T) {
	ctx := driver.WithRemote(context.Background(), driver.Remote{WorkID: "w", OwnerID: "o",
		Budget: work.Budget{MaxTurns: 1}, FailOnBudget: true})
	ex, _ := work.ExecutionFrom(ctx)
	if b, refused := driver.Exhausted(ex); b != "" || refused {
		t.Fatalf("Exhausted before any request = %q %v", b, refused)
	}
	if _, err := boundary.BeginRequest(ex); err != nil {
		t.Fatalf("the first request: %v", err)
	}
	if _, err := boundary.BeginRequest(ex); !errors.Is(err, work.ErrBudgetExhausted) {
		t.Fatalf("the request past the turn budget with FailOnBudget: %v", err)
	}
	if b, refused := driver.Exhausted(ex); b != observe.BudgetTurns || !refused {
		t.Fatalf("Exhausted = %q %v, want turns, refused", b, refused)
	}
	if b, refused := driver.Exhausted(nil); b != "" || refused {
		t.Fatalf("Exhausted(nil) = %q %v", b, refused)
	}
}
