package driver_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// TestForwarder: an engine that decorates another by embedding a
// Forwarder answers as that engine, the driver's reads included, and
// keeps its graceful Shutdown (the report counts the Work it waited for;
// an engine without Shutdown would only be closed and report none). A
// Forwarder holding nil answers work.ErrNotInitialized.
func TestForwarder(t *testing.T) {
	type decorated struct{ driver.Forwarder }
	ctx := t.Context()
	e := driver.NewEngine(decorated{driver.Forwarder{Engine: work.New()}})
	o := work.NewOwner("o")
	started := make(chan struct{})
	ref, err := e.Start(ctx, work.Spec{Owner: o, Target: work.Target{Label: "t", Kind: work.KindFunction},
		Run: func(ctx context.Context) (string, error) { close(started); <-ctx.Done(); return "", ctx.Err() }})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	if live, err := boundary.Live(ctx, e, o); err != nil || !live {
		t.Fatalf("Live = %v, %v; want true", live, err)
	}
	if rows, more, err := boundary.Rows(ctx, e, o); err != nil || more != 0 || len(rows) != 1 || rows[0].ID != ref.ID {
		t.Fatalf("Rows = %+v, %d, %v; want the running Work", rows, more, err)
	}
	if st, err := boundary.Settled(ctx, e, o); err != nil || st == nil || len(st) != 0 {
		t.Fatalf("Settled = %v, %v; want none", st, err)
	}
	if _, nop := boundary.Observer(e).(observe.NopObserver); !nop || boundary.Now(e).IsZero() {
		t.Fatalf("Observer %T, Now %v; want the engine's", boundary.Observer(e), boundary.Now(e))
	}
	ended, cancel := context.WithCancel(ctx)
	cancel() // no drain: the Work is cancelled, and counted
	rep, err := e.Shutdown(ended)
	want := []observe.ShutdownCount{{Target: "t", State: observe.StateCancelled, Count: 1}}
	if err != nil || rep.Drained || !slices.Equal(rep.Settled, want) {
		t.Fatalf("Shutdown = %+v, %v; want the engine's own report, settled %v", rep, err, want)
	}

	var none driver.Forwarder
	if _, err := boundary.Live(ctx, driver.NewEngine(none), o); !errors.Is(err, work.ErrNotInitialized) {
		t.Fatalf("a Forwarder of nil: Live = %v, want ErrNotInitialized", err)
	}
}
