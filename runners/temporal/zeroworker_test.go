package temporal_test

import (
	"testing"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work/enginetest"
)

// TestZeroWorker: a Worker not made by NewWorker (zero or nil) refuses
// Start and Snapshot with work.ErrNotInitialized, and Stop does nothing
// (enginetest.ZeroWorker).
func TestZeroWorker(t *testing.T) {
	for name, w := range map[string]*temporal.Worker{"zero": new(temporal.Worker), "nil": nil} {
		t.Run(name, func(t *testing.T) { enginetest.ZeroWorker(t, w, w.Start) })
	}
}
