package enginetest_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// supervisor is the Harness of the in-process Supervisor.
type supervisor struct{}

func (supervisor) NewEngine(t *testing.T, cfg enginetest.Config) work.Engine {
	s := work.New(work.WithMaxRunning(cfg.MaxRunning), work.WithMaxOutstanding(cfg.MaxOutstanding),
		work.WithMaxStarts(cfg.MaxStarts), work.WithMaxDepth(cfg.MaxDepth),
		work.WithMaxResultBytes(cfg.MaxResultBytes), work.WithDefaultBudget(work.Budget{MaxDuration: cfg.MaxDuration}),
		work.WithRetention(cfg.Retain, cfg.RetainAge), work.WithObserver(cfg.Observer))
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func (supervisor) Capabilities() enginetest.Capabilities {
	return enginetest.Capabilities{
		Guarantees:     work.Guarantees{Execution: "process-local", Rejoin: "process-local"},
		Attempt:        1,
		ExactWaitClock: true,
		Pools:          true,
	}
}

// TestSupervisorConformance runs the conformance suite against the
// in-process Supervisor.
func TestSupervisorConformance(t *testing.T) { enginetest.Run(t, supervisor{}) }
