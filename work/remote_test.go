package work_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/internal/seam"
	"github.com/agentwork/agentwork/work/observe"
)

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

// Execution.Progress returns the counts so far, for a remote run and for
// a background Work under the in-process engine.
func TestExecutionProgress(t *testing.T) {
	ctx := work.WithRemote(context.Background(), seam.Remote{WorkID: "w1", OwnerID: "o"})
	ex, _ := work.ExecutionFrom(ctx)
	ex.ReportProgressForTest(2, 5)
	ex.CountModelRequestForTest()
	ex.CountToolCallForTest()
	ex.CountToolCallForTest()
	if p := ex.Progress(); p != (observe.Progress{Done: 2, Total: 5, ModelRequests: 1, ToolCalls: 2}) {
		t.Fatalf("remote Progress = %+v", p)
	}
	s := work.New()
	defer s.Close(context.Background())
	got := make(chan observe.Progress, 1)
	ref, err := s.Start(context.Background(), work.Spec{Owner: work.NewOwner("p"), Target: work.Target{Label: "f", Kind: work.KindFunction},
		Run: func(ctx context.Context) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			ex.ReportProgressForTest(3, 4)
			got <- ex.Progress()
			return "", nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if p := <-got; p.Done != 3 || p.Total != 4 {
		t.Fatalf("in-process Progress = %+v", p)
	}
	_, _, _ = s.Result(context.Background(), work.NewOwner("p"), ref.ID, work.MaxResultWait)
}

// A remote run counts its budget at the boundary as under the in-process
// engine, and its progress there too (a granted request, an allowed tool
// call), reports the exhaustion and its progress through Remote.Event
// (progress at most once per ProgressInterval), and tells its Engine what
// it spent.
func TestWithRemoteBudgetAndProgress(t *testing.T) {
	var evs []observe.Event
	ctx := work.WithRemote(context.Background(), seam.Remote{WorkID: "w1", OwnerID: "o", OwnerDepth: 1,
		Dims: [3]int64{2, 1, 0}, Event: func(e observe.Event) { evs = append(evs, e) }})
	ex, _ := work.ExecutionFrom(ctx)
	if b := ex.BudgetForTest(); b.MaxTurns != 2 || b.MaxToolCalls != 1 {
		t.Fatalf("Budget = %+v", b)
	}
	for i := range 2 {
		if turn, err := boundary.BeginRequest(ex); err != nil || turn.Final {
			t.Fatalf("request %d: %+v %v", i+1, turn, err)
		}
		boundary.EndRequest(ex, 10, 5, true)
	}
	if !boundary.BeginToolCall(ex) || boundary.BeginToolCall(ex) {
		t.Fatal("the tool-call budget of 1 was not enforced")
	}
	if turn, err := boundary.BeginRequest(ex); err != nil || !turn.Final || turn.Budget != observe.BudgetTurns {
		t.Fatalf("third request: %+v %v, want the final one (turns)", turn, err)
	}
	if _, err := boundary.BeginRequest(ex); !errors.Is(err, work.ErrBudgetExhausted) {
		t.Fatalf("request after the final one: %v", err)
	}
	if b, refused := ex.ExhaustedForTest(); b != observe.BudgetTurns || !refused {
		t.Fatalf("Exhausted = %q %v", b, refused)
	}
	if u := ex.Usage(); u.Turns != 2 || u.ToolCalls != 1 || u.InputTokens != 20 || u.OutputTokens != 10 {
		t.Fatalf("Usage = %+v", u)
	}
	ex.ReportProgressForTest(3, 10)
	ex.ReportProgressForTest(4, 10) // within ProgressInterval: counted, not reported
	var budget, progress []observe.Event
	for _, e := range evs {
		if e.WorkID != "w1" || e.Owner != "o" || e.Depth != 1 || e.Time.IsZero() {
			t.Errorf("event lacks the Work's identity: %+v", e)
		}
		switch e.Type {
		case observe.EventBudgetExhausted:
			budget = append(budget, e)
		case observe.EventProgress:
			progress = append(progress, e)
		}
	}
	if len(budget) != 1 || budget[0].Budget != observe.BudgetTurns {
		t.Errorf("budget events = %+v", budget)
	}
	// The first granted request's count went out; the rest within the
	// interval are counted, not reported.
	if len(progress) != 1 || progress[0].Progress != (observe.Progress{ModelRequests: 1}) {
		t.Errorf("progress events = %+v, want the first request's count only", progress)
	}
	if p := ex.Progress(); p != (observe.Progress{Done: 4, Total: 10, ModelRequests: 3, ToolCalls: 1}) {
		t.Errorf("Progress = %+v, want 4 of 10, 3 granted requests (2 and the final one), 1 allowed tool call", p)
	}

	// FailOnBudget refuses the final request.
	ctx = work.WithRemote(context.Background(), seam.Remote{WorkID: "w2", OwnerID: "o",
		Dims: [3]int64{1, 0, 0}, FailOnBudget: true})
	ex, _ = work.ExecutionFrom(ctx)
	_, _ = boundary.BeginRequest(ex)
	if _, err := boundary.BeginRequest(ex); !errors.Is(err, work.ErrBudgetExhausted) {
		t.Fatalf("FailOnBudget: %v", err)
	}
	ex.CountModelRequestForTest() // no Event: counted only
}
