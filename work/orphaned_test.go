package work_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agentwork/agentwork/internal/fakeclock"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

type bindKey struct{}

// bindingObs is the test Observer, plus a check that each Work's events
// arrive with the context Bind returned for that Work (where telemetry
// keeps its invoke_agent span).
type bindingObs struct {
	*obs
	mu    sync.Mutex
	wrong []observe.Event
}

func (o *bindingObs) Bind(caller, exec context.Context, e observe.Event) context.Context {
	return context.WithValue(o.obs.Bind(caller, exec, e), bindKey{}, e.WorkID)
}

func (o *bindingObs) Event(ctx context.Context, e observe.Event) {
	if e.WorkID != "" && ctx.Value(bindKey{}) != e.WorkID {
		o.mu.Lock()
		o.wrong = append(o.wrong, e)
		o.mu.Unlock()
	}
	o.obs.Event(ctx, e)
}

// TestShutdownOrphanEvents: for each Work Shutdown abandons (running or
// cancel-requested, visible or detached), the Observer receives one
// EventOrphaned in the Work's bound context, carrying its WorkID, owner,
// target and kind, the state it was left in (From) and ErrorClass
// ClassOrphaned: all telemetry needs to end the Work's invoke_agent span.
// Work that settled in the grace period gets none.
func TestShutdownOrphanEvents(t *testing.T) {
	for _, tt := range []struct {
		name   string
		detach bool
	}{
		{name: "visible"},
		{name: "detached", detach: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := &harness{t: t, clk: fakeclock.New(t0), obs: newObs(), kill: make(chan struct{})}
			bo := &bindingObs{obs: h.obs}
			clk := &signalClock{Clock: h.clk}
			h.s = work.New(work.WithClock(clk), work.WithObserver(bo), work.WithDefaultBudget(work.Budget{MaxDuration: -1}), work.WithShutdownGrace(time.Second))
			t.Cleanup(func() {
				close(h.kill)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := h.s.Close(ctx); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			o := work.NewOwner("coord")
			politeRef, polite := h.running(o, agent)
			stubbornRef, stubborn := h.running(o, fn)
			if tt.detach {
				if _, err := h.s.Detach(t.Context(), o, stubbornRef.ID); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			began := clk.arm()
			done := make(chan observe.ShutdownReport)
			go func() { rep, _ := h.s.Shutdown(ctx); done <- rep }()
			<-began
			cancel()
			polite.returnCtxErr()
			h.clk.BlockUntil(1)
			h.obs.waitTerminal(politeRef.ID)
			h.clk.Advance(time.Second)
			rep := <-done
			if rep.OrphanCount() != 1 {
				t.Fatalf("report %v", rep)
			}
			evs := h.obs.ofType(observe.EventOrphaned)
			if len(evs) != 1 {
				t.Fatalf("orphan events = %+v", evs)
			}
			ev := evs[0]
			want := observe.Event{Type: observe.EventOrphaned, WorkID: stubbornRef.ID, Owner: o.ID(), Target: fn.Label,
				Kind: fn.Kind, From: work.StateCancelRequested, Time: ev.Time, ErrorClass: work.ClassOrphaned}
			if ev != want {
				t.Fatalf("orphan event\n got %+v\nwant %+v", ev, want)
			}
			stubborn.complete("late")
			h.obs.waitTerminal(stubbornRef.ID)
			bo.mu.Lock()
			defer bo.mu.Unlock()
			if len(bo.wrong) != 0 {
				t.Fatalf("events outside their Work's bound context: %+v", bo.wrong)
			}
		})
	}
}
