package temporal_test

import (
	"context"
	"errors"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

// engineCalls is every method of work.Engine that returns an error.
func engineCalls(ctx context.Context) map[string]func(e *temporal.Engine) error {
	o := work.NewOwner("o")
	id := driver.NewID()
	spec := work.Spec{Owner: o, Target: work.Target{Label: "x", Kind: work.KindFunction},
		Run: func(context.Context) (string, error) { return "", nil }}
	return map[string]func(e *temporal.Engine) error{
		"Start":     func(e *temporal.Engine) error { _, err := e.Start(ctx, spec); return err },
		"Call":      func(e *temporal.Engine) error { _, err := e.Call(ctx, spec); return err },
		"Status":    func(e *temporal.Engine) error { _, err := e.Status(ctx, o, id); return err },
		"List":      func(e *temporal.Engine) error { _, err := e.List(ctx, o); return err },
		"Rows":      func(e *temporal.Engine) error { _, _, err := e.Rows(ctx, o); return err },
		"Result":    func(e *temporal.Engine) error { _, _, err := e.Result(ctx, o, id, 0); return err },
		"Cancel":    func(e *temporal.Engine) error { _, err := e.Cancel(ctx, o, id); return err },
		"Detach":    func(e *temporal.Engine) error { _, err := e.Detach(ctx, o, id); return err },
		"Send":      func(e *temporal.Engine) error { _, err := e.Send(ctx, o, id, "c", "m"); return err },
		"Answer":    func(e *temporal.Engine) error { _, err := e.Answer(ctx, o, id, "c", "m"); return err },
		"Release":   func(e *temporal.Engine) error { return e.Release(ctx, o) },
		"SetPool":   func(e *temporal.Engine) error { return e.SetPool(ctx, o, work.Budget{MaxTurns: 1}) },
		"Subscribe": func(e *temporal.Engine) error { _, err := e.Subscribe(ctx, o, 1); return err },
		"Settled":   func(e *temporal.Engine) error { _, err := e.Settled(ctx, o); return err },
		"Live":      func(e *temporal.Engine) error { _, err := e.Live(ctx, o); return err },
		"Pending":   func(e *temporal.Engine) error { _, err := e.Pending(ctx, o); return err },
		"Approve":   func(e *temporal.Engine) error { return e.Approve(ctx, work.Approver(), id) },
		"Deny":      func(e *temporal.Engine) error { return e.Deny(ctx, work.Approver(), id) },
		"Updates":   func(e *temporal.Engine) error { _, err := e.Updates(ctx, o, id, 0); return err },
		"Snapshot":  func(e *temporal.Engine) error { _, err := e.Snapshot(ctx); return err },
		"Close":     func(e *temporal.Engine) error { return e.Close(ctx) },
	}
}

// TestMisuseEngine: the zero Engine answers every method with
// work.ErrNotInitialized and its Observer is the no-op one (work.Engine:
// never nil); after Close, an Engine refuses new Work with work.ErrClosed
// and a second Close returns nil.
func TestMisuseEngine(t *testing.T) {
	ctx := context.Background()
	for name, call := range engineCalls(ctx) {
		t.Run("zero/"+name, func(t *testing.T) {
			var err error
			enginetest.NoHang(t, name, func() { err = call(new(temporal.Engine)) })
			if !errors.Is(err, work.ErrNotInitialized) {
				t.Fatalf("%s = %v, want work.ErrNotInitialized", name, err)
			}
		})
	}
	t.Run("zero/Observer", func(t *testing.T) {
		if _, ok := new(temporal.Engine).Observer().(observe.NopObserver); !ok {
			t.Fatal("the zero Engine's Observer is not observe.NopObserver")
		}
	})
	t.Run("closed", func(t *testing.T) {
		e := temporal.New(nil, nil, temporal.WithDataConverter(nil), temporal.WithOptions(nil))
		enginetest.NoHang(t, "closed", func() {
			if err := e.Close(ctx); err != nil {
				t.Fatalf("Close = %v", err)
			}
			calls := engineCalls(ctx)
			for _, name := range []string{"Start", "Call", "Subscribe", "Snapshot"} {
				if err := calls[name](e); !errors.Is(err, work.ErrClosed) {
					t.Errorf("%s after Close = %v, want work.ErrClosed", name, err)
				}
			}
			if err := e.Close(ctx); err != nil {
				t.Errorf("second Close = %v", err)
			}
		})
	})
}

// TestMisuseWorker: NewWorker refuses an invalid target (a zero Child, a
// job that is not a function) with work.ErrInvalidSpec before it
// reaches the service; Stop of a Worker that never started, twice, does
// nothing.
func TestMisuseWorker(t *testing.T) {
	c, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for name, targets := range map[string]map[string]temporal.Child{
		"zero Child":      {"x": {}},
		"zero Job":        {"x": {Kind: work.KindFunction, Job: &work.Job{}}},
		"empty label":     {"": {Kind: work.KindFunction, Run: func(context.Context, string) (string, error) { return "", nil }}},
		"invalid Kind":    {"x": {Run: func(context.Context, string) (string, error) { return "", nil }}},
		"negative option": nil,
	} {
		t.Run(name, func(t *testing.T) {
			enginetest.NoHang(t, name, func() {
				var opts []temporal.Option
				want := work.ErrInvalidSpec
				if targets == nil {
					opts, want = []temporal.Option{temporal.WithMaxAttempts(-1)}, work.ErrInvalidLimit
				}
				if _, err := temporal.NewWorker(c, targets, opts...); !errors.Is(err, want) {
					t.Fatalf("NewWorker = %v, want %v", err, want)
				}
			})
		})
	}
	t.Run("Stop before Start", func(t *testing.T) {
		enginetest.NoHang(t, "Stop", func() {
			w, err := temporal.NewWorker(c, nil, nil)
			if err != nil {
				t.Fatalf("NewWorker(no targets) = %v", err)
			}
			w.Stop()
			w.Stop()
		})
	})
}
