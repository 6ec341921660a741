package restate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

// engineCalls is every method of work.Engine that returns an error.
func engineCalls(ctx context.Context) map[string]func(e *restate.Engine) error {
	o := work.NewOwner("o")
	id := driver.NewID()
	spec := work.Spec{Owner: o, Target: work.Target{Label: "x", Kind: work.KindFunction},
		Run: func(context.Context) (string, error) { return "", nil }}
	return map[string]func(e *restate.Engine) error{
		"Start":     func(e *restate.Engine) error { _, err := e.Start(ctx, spec); return err },
		"Call":      func(e *restate.Engine) error { _, err := e.Call(ctx, spec); return err },
		"Status":    func(e *restate.Engine) error { _, err := e.Status(ctx, o, id); return err },
		"List":      func(e *restate.Engine) error { _, err := e.List(ctx, o); return err },
		"Rows":      func(e *restate.Engine) error { _, _, err := e.Rows(ctx, o); return err },
		"Result":    func(e *restate.Engine) error { _, _, err := e.Result(ctx, o, id, 0); return err },
		"Cancel":    func(e *restate.Engine) error { _, err := e.Cancel(ctx, o, id); return err },
		"Detach":    func(e *restate.Engine) error { _, err := e.Detach(ctx, o, id); return err },
		"Send":      func(e *restate.Engine) error { _, err := e.Send(ctx, o, id, "c", "m"); return err },
		"Answer":    func(e *restate.Engine) error { _, err := e.Answer(ctx, o, id, "c", "m"); return err },
		"Release":   func(e *restate.Engine) error { return e.Release(ctx, o) },
		"SetPool":   func(e *restate.Engine) error { return e.SetPool(ctx, o, work.Budget{MaxTurns: 1}) },
		"Subscribe": func(e *restate.Engine) error { _, err := e.Subscribe(ctx, o, 1); return err },
		"Settled":   func(e *restate.Engine) error { _, err := e.Settled(ctx, o); return err },
		"Live":      func(e *restate.Engine) error { _, err := e.Live(ctx, o); return err },
		"Pending":   func(e *restate.Engine) error { _, err := e.Pending(ctx, o); return err },
		"Approve":   func(e *restate.Engine) error { return e.Approve(ctx, work.Approver(), id) },
		"Deny":      func(e *restate.Engine) error { return e.Deny(ctx, work.Approver(), id) },
		"Updates":   func(e *restate.Engine) error { _, err := e.Updates(ctx, o, id, 0); return err },
		"Snapshot":  func(e *restate.Engine) error { _, err := e.Snapshot(ctx); return err },
		"Close":     func(e *restate.Engine) error { return e.Close(ctx) },
	}
}

// TestMisuseEngine: the zero Engine answers every method with
// work.ErrNotInitialized and its Observer is the no-op one (work.Engine:
// never nil); after Close, an Engine refuses new Work with work.ErrClosed
// and a second Close returns nil; nil options are ignored.
func TestMisuseEngine(t *testing.T) {
	ctx := context.Background()
	for name, call := range engineCalls(ctx) {
		t.Run("zero/"+name, func(t *testing.T) {
			var err error
			enginetest.NoHang(t, name, func() { err = call(new(restate.Engine)) })
			if !errors.Is(err, work.ErrNotInitialized) {
				t.Fatalf("%s = %v, want work.ErrNotInitialized", name, err)
			}
		})
	}
	t.Run("zero/Observer", func(t *testing.T) {
		if _, ok := new(restate.Engine).Observer().(observe.NopObserver); !ok {
			t.Fatal("the zero Engine's Observer is not observe.NopObserver")
		}
	})
	t.Run("closed", func(t *testing.T) {
		e := restate.New(nil, restate.WithHTTPClient(nil), restate.WithLogger(nil), restate.WithOptions(nil))
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

// TestMisuseWorker: NewWorker refuses an invalid target, or none with no
// registry, with work.ErrInvalidSpec and a negative option with work.ErrInvalidLimit;
// a Worker whose admin does not answer fails Start within ctx and its
// Stop, before or after, does nothing and returns.
func TestMisuseWorker(t *testing.T) {
	fn := func(context.Context, string) (string, error) { return "", nil }
	svc := []restate.Option{restate.WithIngress("http://127.0.0.1:1"), restate.WithAdmin("http://127.0.0.1:1")}
	for _, tt := range []struct {
		name    string
		targets map[string]restate.Child
		opts    []restate.Option
		want    error
	}{
		{"zero Child", map[string]restate.Child{"x": {}}, nil, work.ErrInvalidSpec},
		{"zero Job", map[string]restate.Child{"x": {Kind: work.KindFunction, Job: &work.Job{}}}, nil, work.ErrInvalidSpec},
		{"label with a slash", map[string]restate.Child{"a/b": {Kind: work.KindFunction, Run: fn}}, nil, work.ErrInvalidSpec},
		{"no ingress", map[string]restate.Child{"x": {Kind: work.KindFunction, Run: fn}}, []restate.Option{restate.WithIngress("")}, work.ErrUnavailable},
		{"negative option", map[string]restate.Child{"x": {Kind: work.KindFunction, Run: fn}}, []restate.Option{restate.WithMaxAttempts(-1)}, work.ErrInvalidLimit},
		{"no target, no registry", nil, nil, work.ErrInvalidSpec},
	} {
		t.Run(tt.name, func(t *testing.T) {
			enginetest.NoHang(t, tt.name, func() {
				if _, err := restate.NewWorker(tt.targets, append(append([]restate.Option(nil), svc...), tt.opts...)...); !errors.Is(err, tt.want) {
					t.Fatalf("NewWorker = %v, want %v", err, tt.want)
				}
			})
		})
	}
	t.Run("admin does not answer", func(t *testing.T) {
		enginetest.NoHang(t, "Start", func() {
			w, err := restate.NewWorker(map[string]restate.Child{"x": {Kind: work.KindFunction, Run: fn}}, svc...)
			if err != nil {
				t.Fatalf("NewWorker = %v", err)
			}
			w.Stop()
			if u := w.URL(); u != "" {
				t.Errorf("URL before Start = %q", u)
			}
			if _, err := w.Snapshot(context.Background()); err != nil {
				t.Errorf("Snapshot before Start = %v", err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			if err := w.Start(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Start within a short ctx = %v, want its context.DeadlineExceeded", err)
			}
			if err := w.Start(context.Background()); !errors.Is(err, work.ErrUnavailable) {
				t.Errorf("Start = %v, want work.ErrUnavailable", err)
			}
			w.Stop()
			w.Stop()
		})
	})
}
