package temporal

import (
	"context"
	"sync"
	"testing"

	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// boundRecorder records the Binds and the events a lifecycle reports.
type boundRecorder struct {
	mu     sync.Mutex
	binds  int
	events []observe.EventType
}

func (r *boundRecorder) Begin(ctx context.Context, _ observe.ToolCall) (context.Context, func(observe.ToolCallEnd)) {
	return ctx, func(observe.ToolCallEnd) {}
}

func (r *boundRecorder) Bind(_, exec context.Context, _ observe.Event) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.binds++
	return exec
}

func (r *boundRecorder) Event(_ context.Context, e observe.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e.Type)
}

// runLostTask runs, as a workflow task that reports live, a Work's
// lifecycle from queued to completed on the Worker whose stash is stash.
func runLostTask(t *testing.T, stash *spanStash, obs observe.Observer) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.ExecuteWorkflow(func(ctx workflow.Context) error {
		in := workInput{ID: "0123456789abcdef0123456789abcdef", Owner: "o", Label: "t", Kind: work.KindAgent, Created: workflow.Now(ctx)}
		l := newLifecycle(ctx, obs, in, stash)
		l.emit(ctx, observe.Event{Type: observe.EventRunning, From: work.StateQueued, To: work.StateRunning})
		l.emit(ctx, observe.Event{Type: observe.EventType(work.StateCompleted), From: work.StateRunning, To: work.StateCompleted})
		return nil
	})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
}

// TestLostTaskReportsOnce: a workflow task that reported its Work's
// terminal event live and was then lost (it timed out while its local
// activity waited, or the server refused its completion) runs again on
// the same Worker: nothing is reported again, the span is bound once
// (the integration run's "2 invoke_agent spans" for a Work whose last
// task outlived its timeout). On another Worker (another stash) the
// events are reported again: delivery is at least once across Workers.
func TestLostTaskReportsOnce(t *testing.T) {
	want := []observe.EventType{observe.EventQueued, observe.EventRunning, observe.EventType(work.StateCompleted)}
	rec := &boundRecorder{}
	stash := newSpanStash()
	runLostTask(t, stash, rec)
	runLostTask(t, stash, rec)
	if rec.binds != 1 || len(rec.events) != len(want) {
		t.Fatalf("the same Worker ran the lost task again: %d binds, events %v; want 1 bind, %v", rec.binds, rec.events, want)
	}
	for i := range want {
		if rec.events[i] != want[i] {
			t.Fatalf("events %v, want %v", rec.events, want)
		}
	}
	other := &boundRecorder{}
	runLostTask(t, newSpanStash(), other)
	if other.binds != 1 || len(other.events) != len(want) {
		t.Fatalf("another Worker: %d binds, events %v; want the Work reported again", other.binds, other.events)
	}
}
