package temporal

import (
	"context"
	"fmt"
	"slices"
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
// lifecycle from queued to end (completed or failed) on the Worker whose
// stash is stash.
func runLostTask(t *testing.T, stash *spanStash, obs observe.Observer, end observe.State) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.ExecuteWorkflow(func(ctx workflow.Context) error {
		in := workInput{ID: "0123456789abcdef0123456789abcdef", Owner: "o", Label: "t", Kind: work.KindAgent, Created: workflow.Now(ctx)}
		l := newLifecycle(ctx, obs, in, stash)
		l.emit(ctx, observe.Event{Type: observe.EventRunning, From: work.StateQueued, To: work.StateRunning})
		l.emit(ctx, observe.Event{Type: observe.EventType(end), From: work.StateRunning, To: end})
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
	runLostTask(t, stash, rec, work.StateCompleted)
	runLostTask(t, stash, rec, work.StateCompleted)
	if rec.binds != 1 || len(rec.events) != len(want) {
		t.Fatalf("the same Worker ran the lost task again: %d binds, events %v; want 1 bind, %v", rec.binds, rec.events, want)
	}
	for i := range want {
		if rec.events[i] != want[i] {
			t.Fatalf("events %v, want %v", rec.events, want)
		}
	}
	other := &boundRecorder{}
	runLostTask(t, newSpanStash(), other, work.StateCompleted)
	if other.binds != 1 || len(other.events) != len(want) {
		t.Fatalf("another Worker: %d binds, events %v; want the Work reported again", other.binds, other.events)
	}
}

// TestLostTaskDecidesOtherwise: a lost task run anew on the same Worker
// that ends otherwise (later, it saw a cancel or a deadline) reports that
// end, on a span of its own: the span exported first does not stand for
// the durable outcome alone.
func TestLostTaskDecidesOtherwise(t *testing.T) {
	rec := &boundRecorder{}
	stash := newSpanStash()
	runLostTask(t, stash, rec, work.StateCompleted)
	runLostTask(t, stash, rec, work.StateFailed)
	want := []observe.EventType{observe.EventQueued, observe.EventRunning, observe.EventType(work.StateCompleted), observe.EventType(work.StateFailed)}
	if rec.binds != 2 || !slices.Equal(rec.events, want) {
		t.Fatalf("%d binds, events %v; want 2 binds, %v", rec.binds, rec.events, want)
	}
}

// TestStashEndsKeepSpans: the runs' ends a Worker remembers never evict a
// continued job's span context, however many Work end meanwhile.
func TestStashEndsKeepSpans(t *testing.T) {
	s := newSpanStash()
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "job")
	s.put("job", ctx)
	for i := range 2 * maxStashed {
		s.end(fmt.Sprint("run-", i), observe.Event{To: work.StateCompleted})
	}
	if got, ok := s.take("job"); !ok || got != ctx {
		t.Fatal("the job's span context was evicted by the ends")
	}
	if _, ok := s.ended("run-0"); ok {
		t.Fatal("the ends are not bounded")
	}
	if _, ok := s.ended(fmt.Sprint("run-", 2*maxStashed-1)); !ok {
		t.Fatal("the newest end was not kept")
	}
}
