package driver_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/enginetest"
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

// closeOnly is an engine without a Shutdown of its own: its Close answers
// err, its Observer is obs.
type closeOnly struct {
	driver.Engine
	err error
	obs observe.Observer
}

func (c closeOnly) Close(context.Context) error { return c.err }
func (c closeOnly) Observer() observe.Observer  { return c.obs }
func (c closeOnly) Now() time.Time              { return time.Now() }

// TestShutdownReported: an engine's Shutdown hands its report to the
// Observer once: an engine without a Shutdown of its own (a durable one)
// when its Close ended (drained or cut short by ctx), not when Close was
// refused and changed nothing; an engine with its own (a decorated
// in-process engine) through that Shutdown alone, never twice.
func TestShutdownReported(t *testing.T) {
	inner := driver.Forwarder{Engine: work.New()}
	t.Cleanup(func() { _ = inner.Engine.Close(context.Background()) })
	for _, c := range []struct {
		name    string
		err     error
		reports int
	}{
		{"closed", nil, 1},
		{"ctx ended", context.DeadlineExceeded, 1},
		{"from a child", work.ErrCloseFromChild, 0},
		{"not initialized", work.ErrNotInitialized, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &enginetest.Recorder{}
			rep, err := driver.NewEngine(closeOnly{inner, c.err, rec}).Shutdown(t.Context())
			if !errors.Is(err, c.err) || err == nil && !rep.Drained || err != nil && rep.Drained {
				t.Fatalf("Shutdown = %v, %v; want drained iff Close returned nil (%v)", rep, err, c.err)
			}
			if got := rec.Shutdowns(); len(got) != c.reports || c.reports == 1 && !reflect.DeepEqual(got[0], rep) {
				t.Fatalf("the Observer got %v; want %d report(s) of %v", got, c.reports, rep)
			}
		})
	}
	rec := &enginetest.Recorder{}
	type decorated struct{ driver.Forwarder }
	e := driver.NewEngine(decorated{driver.Forwarder{Engine: work.New(work.WithObserver(rec))}})
	rep, err := e.Shutdown(t.Context())
	if got := rec.Shutdowns(); err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], rep) {
		t.Fatalf("decorated: Shutdown = %v, %v, the Observer got %v; want its one report", rep, err, got)
	}
}
