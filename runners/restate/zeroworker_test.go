package restate_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/work"
)

// A Worker not made by NewWorker (zero or nil) refuses Start with
// work.ErrNotInitialized, and Stop and Snapshot neither panic nor hang.
func TestZeroWorker(t *testing.T) {
	for name, w := range map[string]*restate.Worker{"zero": new(restate.Worker), "nil": nil} {
		t.Run(name, func(t *testing.T) {
			if err := w.Start(context.Background()); !errors.Is(err, work.ErrNotInitialized) {
				t.Errorf("Start = %v, want work.ErrNotInitialized", err)
			}
			if _, err := w.Snapshot(context.Background()); !errors.Is(err, work.ErrNotInitialized) {
				t.Errorf("Snapshot = %v, want work.ErrNotInitialized", err)
			}
			w.Stop()
		})
	}
}
