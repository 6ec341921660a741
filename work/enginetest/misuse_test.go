package enginetest_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

// TestMisuseRecorder: the zero Recorder is ready (its doc comment): it
// records and returns what it saw, and Config's Options with no observer
// or clock are valid.
func TestMisuseRecorder(t *testing.T) {
	var r enginetest.Recorder
	ctx := context.Background()
	if len(r.Events()) != 0 || len(r.Calls()) != 0 {
		t.Fatal("the zero Recorder has records")
	}
	r.Event(ctx, observe.Event{Type: observe.EventQueued})
	_, end := r.Begin(ctx, observe.ToolCall{})
	end(observe.ToolCallEnd{})
	if got := r.Bind(ctx, ctx, observe.Event{}); got != ctx {
		t.Error("Bind changed exec")
	}
	if len(r.Events()) != 1 || len(r.Calls()) != 1 || !r.Calls()[0].Ended {
		t.Fatalf("events %v, calls %v", r.Events(), r.Calls())
	}
	_ = enginetest.Config{}.Options()
}

// TestEngineCalls: EngineCalls calls every method of work.Engine (but
// Shutdown) and of driver.Engine that returns an error (a method added to
// either must be added to it).
func TestEngineCalls(t *testing.T) {
	var want []string
	for _, engine := range []reflect.Type{reflect.TypeFor[*work.Engine](), reflect.TypeFor[driver.Engine]()} {
		for i := range engine.NumMethod() {
			m := engine.Method(i)
			if m.Name != "Shutdown" && m.Type.NumOut() > 0 && m.Type.Out(m.Type.NumOut()-1) == reflect.TypeFor[error]() &&
				!slices.Contains(want, m.Name) {
				want = append(want, m.Name)
			}
		}
	}
	if got := slices.Sorted(maps.Keys(enginetest.EngineCalls(t.Context(), new(work.Engine)))); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("EngineCalls: %v, want %v", got, want)
	}
}

// misused is an in-process engine with one deliberate misuse defect, so
// that TestMisuseHelpersCatchBrokenEngines can show ZeroEngine and
// ClosedEngine fail on it.
type misused struct {
	driver.Forwarder
	defect string
	lives  *int // "zero-refused-once": the Live calls so far
	closes *int // "closed-close-twice": the Close calls so far
}

func newMisused(s *work.Engine, defect string) *work.Engine {
	return driver.NewEngine(misused{driver.Forwarder{Engine: s}, defect, new(int), new(int)})
}

func (m misused) Status(ctx context.Context, o work.Owner, id string) (work.Status, error) {
	st, err := m.Engine.Status(ctx, o, id)
	if m.defect == "zero-status" && errors.Is(err, work.ErrNotInitialized) {
		err = nil
	}
	return st, err
}

func (m misused) Live(ctx context.Context, o work.Owner) (bool, error) {
	live, err := m.Forwarder.Live(ctx, o)
	if *m.lives++; m.defect == "zero-refused-once" && *m.lives > 1 {
		err = nil
	}
	return live, err
}

func (m misused) Observer() observe.Observer {
	if m.defect == "zero-observer" {
		return new(enginetest.Recorder)
	}
	return m.Forwarder.Observer()
}

func (m misused) Subscribe(ctx context.Context, o work.Owner, buffer int) (*work.Subscription, error) {
	sub, err := m.Engine.Subscribe(ctx, o, buffer)
	if m.defect == "closed-subscribe" && errors.Is(err, work.ErrClosed) {
		err = nil
	}
	return sub, err
}

func (m misused) Close(ctx context.Context) error {
	err := m.Engine.Close(ctx)
	if *m.closes++; m.defect == "closed-close-twice" && *m.closes > 1 {
		err = work.ErrClosed
	}
	return err
}

// TestBrokenMisuse runs ZeroEngine and ClosedEngine over a misused
// in-process engine; TestMisuseHelpersCatchBrokenEngines runs it, one
// defect per process, and expects it to fail.
func TestBrokenMisuse(t *testing.T) {
	defect := os.Getenv("AGENTWORK_BROKEN")
	if defect == "" {
		t.Skip("run by TestMisuseHelpersCatchBrokenEngines")
	}
	t.Run("zero", func(t *testing.T) {
		enginetest.ZeroEngine(t, newMisused(new(work.Engine), defect))
	})
	t.Run("closed", func(t *testing.T) {
		var also []string
		if defect == "closed-snapshot" { // an in-process engine's Snapshot still answers after Close
			also = append(also, "Snapshot")
		}
		enginetest.ClosedEngine(t, newMisused(work.New(), defect), also...)
	})
}

// TestMisuseHelpersCatchBrokenEngines: ZeroEngine and ClosedEngine fail on
// an Engine with one misuse defect, in the subtest that checks it, and
// pass it without one.
func TestMisuseHelpersCatchBrokenEngines(t *testing.T) {
	t.Run("no defect", func(t *testing.T) {
		enginetest.ZeroEngine(t, newMisused(new(work.Engine), ""))
		enginetest.ClosedEngine(t, newMisused(work.New(), ""))
	})
	for defect, want := range map[string]string{
		"zero-status":        "--- FAIL: TestBrokenMisuse/zero/Status",
		"zero-refused-once":  "--- FAIL: TestBrokenMisuse/zero/Live",
		"zero-observer":      "--- FAIL: TestBrokenMisuse/zero/Observer",
		"closed-subscribe":   "Subscribe after Close = <nil>, want work.ErrClosed",
		"closed-snapshot":    "Snapshot after Close = <nil>, want work.ErrClosed",
		"closed-close-twice": "second Close = ",
	} {
		t.Run(defect, func(t *testing.T) { failsWith(t, "TestBrokenMisuse", defect, want) })
	}
}

// TestZeroWorker: ZeroWorker passes a Worker that keeps its zero value's
// contract and fails one whose Start does not refuse.
func TestZeroWorker(t *testing.T) {
	if os.Getenv("AGENTWORK_BROKEN") == "worker-start" {
		enginetest.ZeroWorker(t, zeroWorker{}, func() error { return nil })
		return
	}
	enginetest.ZeroWorker(t, zeroWorker{}, func() error { return work.ErrNotInitialized })
	failsWith(t, "TestZeroWorker", "worker-start", "Start = <nil>, want work.ErrNotInitialized")
}

// zeroWorker is a Worker's zero value as the runners have it.
type zeroWorker struct{}

func (zeroWorker) Snapshot(context.Context) (observe.Snapshot, error) {
	return observe.Snapshot{}, work.ErrNotInitialized
}

func (zeroWorker) Stop() {}
