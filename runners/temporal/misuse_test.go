package temporal_test

import (
	"context"
	"errors"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
)

// TestMisuseEngine: the zero Engine answers every method with
// work.ErrNotInitialized and its Observer is the no-op one (work.Engine:
// never nil); after Close, an Engine refuses new Work and its Snapshot
// with work.ErrClosed and a second Close returns nil.
func TestMisuseEngine(t *testing.T) {
	t.Run("zero", func(t *testing.T) { enginetest.ZeroEngine(t, new(work.Engine)) })
	t.Run("closed", func(t *testing.T) {
		enginetest.ClosedEngine(t, temporal.New(nil, nil, temporal.WithDataConverter(nil), temporal.WithOptions(nil)), "Snapshot")
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
