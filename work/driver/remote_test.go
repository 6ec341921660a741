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
	accepted := map[string]int{} // the hooks' own decision: at most two updates, a repeat is a duplicate
	answered := make(chan bool, 4)
	var guidance []string
	ctx := driver.WithRemote(context.Background(), driver.Remote{WorkID: "w1", OwnerID: "o",
		Event: func(e observe.Event) { evs = append(evs, e) },
		Update: func(key string, value []byte, question bool) (work.UpdateReceipt, string) {
			if seq, ok := accepted[key]; ok {
				return work.UpdateReceipt{Seq: seq, Duplicate: true}, ""
			}
			if len(accepted) == 2 {
				return work.UpdateReceipt{}, work.UpdateRefusedCount
			}
			accepted[key] = len(accepted) + 1
			return work.UpdateReceipt{Seq: len(accepted)}, ""
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
	if _, err := work.ReportUpdate(ctx, "x", []byte(`1`), false); !isRefusal(err, work.UpdateRefusedCount) {
		t.Fatalf("over the count: %v", err)
	}
	var ups []observe.Event // the granted requests' progress counts aside
	for _, e := range evs {
		if e.Type != observe.EventProgress {
			ups = append(ups, e)
		}
	}
	if len(ups) != 3 || ups[0].Type != observe.EventUpdate || ups[0].WorkID != "w1" || ups[0].Seq != 1 ||
		ups[2].ErrorClass != work.UpdateRefusedCount || ups[2].Time.IsZero() {
		t.Fatalf("remote events = %+v", evs)
	}
	// A function child under another Engine.
	if _, err := work.ReportUpdate(ctx, "q", []byte(`"?"`), true); err != nil { // a duplicate: nothing opens
		t.Fatal(err)
	}
	if g, err := work.AwaitAnswer(ctx); g != nil || err != nil {
		t.Fatalf("AwaitAnswer with no question open = %q, %v", g, err)
	}
	// No hooks: not declared.
	bare := driver.WithRemote(context.Background(), driver.Remote{WorkID: "w2", OwnerID: "o"})
	if _, err := work.ReportUpdate(bare, "k", []byte(`1`), false); !isRefusal(err, work.UpdateRefusedNotDeclared) {
		t.Fatalf("a Remote without Update: %v", err)
	}
}

// isRefusal reports whether err is the update refusal of reason.
func isRefusal(err error, reason string) bool {
	var we *work.Error
	return errors.Is(err, work.ErrUpdateRefused) && errors.As(err, &we) && we.Class == reason
}
