package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

// TestMisuseObserver: a nil *Observer behaves as the zero one (its doc
// comment): it records nothing, Begin and Bind return the context they
// were given, Unregister returns nil, Watch returns a function that does
// nothing, and the status page is empty; New ignores nil options and nil
// providers and logger.
func TestMisuseObserver(t *testing.T) {
	ctx := context.Background()
	for name, o := range map[string]*telemetry.Observer{"nil": nil, "zero": new(telemetry.Observer)} {
		t.Run(name, func(t *testing.T) {
			enginetest.NoHang(t, name, func() {
				c, end := o.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallLaunch, Tool: "t"})
				if c != ctx || end == nil {
					t.Error("Begin changed ctx or returned no end")
				}
				end(observe.ToolCallEnd{})
				if got := o.Bind(ctx, ctx, observe.Event{Type: observe.EventQueued, Target: "t"}); got == nil {
					t.Error("Bind returned a nil context")
				}
				o.Event(ctx, observe.Event{Type: observe.EventQueued, WorkID: "w", Target: "t", To: work.StateQueued})
				o.Replay(ctx, observe.Event{Type: observe.EventQueued, WorkID: "w", Target: "t", To: work.StateQueued})
				o.ShutdownReported(ctx, observe.ShutdownReport{})
				if err := o.Unregister(); err != nil {
					t.Errorf("Unregister = %v", err)
				}
				unwatch := o.Watch(nil)
				unwatch()
				if p := o.Status(); len(p.Work) != 0 {
					t.Errorf("Status = %+v", p)
				}
				rec := httptest.NewRecorder()
				o.StatusHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
				if rec.Code != http.StatusOK {
					t.Errorf("StatusHandler answered %d", rec.Code)
				}
			})
		})
	}
	t.Run("New with nil options", func(t *testing.T) {
		enginetest.NoHang(t, "New", func() {
			o, err := telemetry.New(nil, telemetry.WithLogger(nil), telemetry.WithMeterProvider(nil), telemetry.WithTracerProvider(nil))
			if err != nil {
				t.Errorf("New = %v", err) // off the test's goroutine: no Fatal
				return
			}
			defer o.Unregister()
			s := work.New(work.WithObserver(o))
			defer s.Close(ctx)
			if _, err := s.Call(ctx, work.Spec{Owner: work.NewOwner("o"), Target: work.Target{Label: "t", Kind: work.KindFunction},
				Run: func(context.Context) (string, error) { return "x", nil }}); err != nil {
				t.Errorf("Call = %v", err)
			}
		})
	})
}
