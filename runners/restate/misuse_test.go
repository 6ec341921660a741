package restate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
)

// TestMisuseEngine: the zero Engine answers every method with
// work.ErrNotInitialized and its Observer is the no-op one (work.Engine:
// never nil); after Close, an Engine refuses new Work and its Snapshot
// with work.ErrClosed and a second Close returns nil; nil options are ignored.
func TestMisuseEngine(t *testing.T) {
	t.Run("zero", func(t *testing.T) { enginetest.ZeroEngine(t, new(work.Engine)) })
	t.Run("closed", func(t *testing.T) {
		enginetest.ClosedEngine(t, restate.New(nil, restate.WithHTTPClient(nil), restate.WithLogger(nil), restate.WithOptions(nil)), "Snapshot")
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
