package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestZeroObserver: every exported method of a zero Observer works as a
// no-op (Status and StatusHandler report the engines it watches) and
// none panics, whether it is called directly or by an engine.
func TestZeroObserver(t *testing.T) {
	ctx, root := newHarness(t).root()
	defer root.End()
	events := []observe.Event{
		{Type: observe.EventQueued, WorkID: "w", Target: "t", To: work.StateQueued},
		{Type: observe.EventCancelRequested, WorkID: "w", Target: "t", From: work.StateRunning, To: work.StateCancelRequested, Time: time.Now()},
		{Type: observe.EventFailed, WorkID: "w", Target: "t", From: work.StateCancelRequested, To: work.StateFailed, ErrorClass: "internal"},
		{Type: observe.EventOrphaned, WorkID: "w", Target: "t", From: work.StateRunning, ErrorClass: work.ClassOrphaned},
		{Type: observe.EventBudgetExhausted, WorkID: "w", Target: "t", Budget: "turns"},
		{Type: observe.EventUsage, WorkID: "w", Target: "t", Usage: observe.Usage{Turns: 1}},
		{Type: observe.EventRefused, Target: "t", ErrorClass: "closed"},
		{Type: observe.EventStatusBlock, Count: 1},
		{Type: observe.EventWaiting, WorkID: "w", Target: "t"},
		{Type: observe.EventPolled, WorkID: "w", Target: "t", Poll: observe.PollOutcomeWaiting},
		{Type: observe.EventApprovalRequested, WorkID: "w", Target: "t"},
	}
	for _, tc := range []struct {
		name string
		obs  func() *telemetry.Observer
	}{
		{"var", func() *telemetry.Observer { var o telemetry.Observer; return &o }},
		{"new", func() *telemetry.Observer { return new(telemetry.Observer) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.obs()
			for _, k := range []observe.ToolCallKind{observe.ToolCallLaunch, observe.ToolCallForeground, observe.ToolCallAction} {
				cctx, end := o.Begin(ctx, observe.ToolCall{Kind: k, Tool: "t", Action: "list", Owner: "o"})
				if cctx == nil {
					t.Fatalf("Begin(%v) returned a nil context", k)
				}
				end(observe.ToolCallEnd{Outcome: "error", ErrorClass: "internal"})
			}
			for _, typ := range []observe.EventType{observe.EventQueued, observe.EventForeground} {
				exec := context.Background()
				if got := o.Bind(ctx, exec, observe.Event{Type: typ, Target: "t", Kind: work.KindAgent}); got == nil {
					t.Fatalf("Bind(%s) returned a nil context", typ)
				}
			}
			for _, e := range events {
				o.Event(ctx, e)
				o.Replay(ctx, e)
			}
			o.ShutdownReported(ctx, observe.ShutdownReport{Orphaned: []observe.ShutdownCount{{Target: "t", State: work.StateRunning, Count: 1}}})
			if err := o.Unregister(); err != nil {
				t.Fatal(err)
			}
			if p := o.Status(); p.Work == nil || p.Targets == nil {
				t.Fatalf("Status() = %+v", p)
			}
			for _, target := range []string{"/", "/?format=json"} {
				rec := httptest.NewRecorder()
				o.StatusHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
				if rec.Code != http.StatusOK {
					t.Fatalf("GET %s: %d", target, rec.Code)
				}
			}
			unwatch := o.Watch(nil)
			unwatch()
			unwatch()

			// As an in-process engine's Observer, through a whole lifecycle.
			s := work.New(work.WithObserver(o))
			owner := work.NewOwner("zero")
			ref, err := s.Start(ctx, work.Spec{Owner: owner, Target: summarizer, Run: func(context.Context) (string, error) { return "", nil }})
			if err != nil {
				t.Fatal(err)
			}
			if st, _, err := s.Result(ctx, owner, ref.ID, work.MaxResultWait); err != nil || st.State != work.StateCompleted {
				t.Fatalf("Result: %v %v", st.State, err)
			}
			if p := o.Status(); len(p.Targets) != 1 || p.Targets[0].States[string(work.StateCompleted)] != 1 {
				t.Fatalf("Status() of the watched engine = %+v", p)
			}
			if _, err := s.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
