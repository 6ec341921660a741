package enginetest

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// EngineCalls returns a call of every method of e that returns an error,
// keyed by the method's name: each such method of work/driver's Engine
// (work.Engine's methods, Snapshot and Close included, and
// work/boundary's Rows, Settled and Live). Each call passes ctx and valid arguments: the owner "o", a
// Work id that names no Work, a function child's Spec.
func EngineCalls(ctx context.Context, e *work.Engine) map[string]func() error {
	o := work.NewOwner("o")
	const id = "00000000000000000000000000000000"
	spec := work.Spec{Owner: o, Target: work.Target{Label: "x", Kind: work.KindFunction},
		Run: func(context.Context) (string, error) { return "", nil }}
	calls := map[string]func() error{
		"Start":     func() error { _, err := e.Start(ctx, spec); return err },
		"Call":      func() error { _, err := e.Call(ctx, spec); return err },
		"Status":    func() error { _, err := e.Status(ctx, o, id); return err },
		"List":      func() error { _, err := e.List(ctx, o); return err },
		"Rows":      func() error { _, _, err := boundary.Rows(ctx, e, o); return err },
		"Result":    func() error { _, _, err := e.Result(ctx, o, id, 0); return err },
		"Cancel":    func() error { _, err := e.Cancel(ctx, o, id); return err },
		"Detach":    func() error { _, err := e.Detach(ctx, o, id); return err },
		"Send":      func() error { _, err := e.Send(ctx, o, id, "c", "m"); return err },
		"Answer":    func() error { _, err := e.Answer(ctx, o, id, "c", "m"); return err },
		"Release":   func() error { return e.Release(ctx, o) },
		"SetPool":   func() error { return e.SetPool(ctx, o, work.Budget{MaxTurns: 1}) },
		"Subscribe": func() error { _, err := e.Subscribe(ctx, o, 1); return err },
		"Settled":   func() error { _, err := boundary.Settled(ctx, e, o); return err },
		"Live":      func() error { _, err := boundary.Live(ctx, e, o); return err },
		"Pending":   func() error { _, err := e.Pending(ctx, o); return err },
		"Approve":   func() error { return e.Approve(ctx, work.Approver(), id) },
		"Deny":      func() error { return e.Deny(ctx, work.Approver(), id) },
		"Updates":   func() error { _, err := e.Updates(ctx, o, id, 0); return err },
	}
	calls["Snapshot"] = func() error { _, err := e.Snapshot(ctx); return err }
	calls["Close"] = func() error { return e.Close(ctx) }
	return calls
}

// ZeroEngine checks e, an Engine its constructor did not set up (a zero
// or nil one): every call of EngineCalls, made twice, answers
// work.ErrNotInitialized, its Observer is observe.NopObserver
// (work.Engine: never nil) and Now returns. Each check is a subtest named
// after the method (Observer for the last two), run under NoHang.
func ZeroEngine(t *testing.T, e *work.Engine) {
	t.Helper()
	calls := EngineCalls(t.Context(), e)
	for _, name := range slices.Sorted(maps.Keys(calls)) {
		t.Run(name, func(t *testing.T) {
			var errs [2]error // twice: the zero value stays refused
			NoHang(t, name, func() { errs[0], errs[1] = calls[name](), calls[name]() })
			for _, err := range errs {
				if !errors.Is(err, work.ErrNotInitialized) {
					t.Fatalf("%s = %v, want work.ErrNotInitialized", name, err)
				}
			}
		})
	}
	t.Run("Observer", func(t *testing.T) {
		var obs observe.Observer
		NoHang(t, "Observer", func() { obs, _ = boundary.Observer(e), boundary.Now(e) })
		if _, ok := obs.(observe.NopObserver); !ok {
			t.Fatalf("Observer() = %T, want observe.NopObserver", obs)
		}
	})
}

// ClosedEngine closes e, which must have a Close method, and checks that
// Start, Call and Subscribe (work.Engine: a closed Engine takes no new
// Work), and each call of EngineCalls named in also, then answer
// work.ErrClosed and that a second Close returns nil; all under NoHang.
func ClosedEngine(t *testing.T, e *work.Engine, also ...string) {
	t.Helper()
	calls := EngineCalls(t.Context(), e)
	if calls["Close"] == nil {
		t.Fatalf("%T has no Close(context.Context) error", e)
	}
	refused := append([]string{"Start", "Call", "Subscribe"}, also...)
	for _, name := range refused {
		if calls[name] == nil {
			t.Fatalf("%T has no call %q", e, name)
		}
	}
	var closeErr, againErr error
	errs := make([]error, len(refused))
	NoHang(t, "closed", func() {
		if closeErr = calls["Close"](); closeErr != nil {
			return
		}
		for i, name := range refused {
			errs[i] = calls[name]()
		}
		againErr = calls["Close"]()
	})
	if closeErr != nil {
		t.Fatalf("Close = %v", closeErr)
	}
	for i, name := range refused {
		if !errors.Is(errs[i], work.ErrClosed) {
			t.Errorf("%s after Close = %v, want work.ErrClosed", name, errs[i])
		}
	}
	if againErr != nil {
		t.Errorf("second Close = %v", againErr)
	}
}

// ZeroWorker checks w, a runner's Worker not made by its NewWorker (a zero
// or nil one), and start, a call of its Start: start and Snapshot answer
// work.ErrNotInitialized and Stop, twice, returns; all under NoHang.
func ZeroWorker(t *testing.T, w interface {
	observe.Watched
	Stop()
}, start func() error) {
	t.Helper()
	var startErr, snapErr error
	NoHang(t, "zero Worker", func() {
		startErr = start()
		_, snapErr = w.Snapshot(t.Context())
		w.Stop()
		w.Stop()
	})
	if !errors.Is(startErr, work.ErrNotInitialized) {
		t.Errorf("Start = %v, want work.ErrNotInitialized", startErr)
	}
	if !errors.Is(snapErr, work.ErrNotInitialized) {
		t.Errorf("Snapshot = %v, want work.ErrNotInitialized", snapErr)
	}
}
