package enginetest_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// inProcess is the Harness of the in-process engine (work.New).
type inProcess struct{}

func (inProcess) NewEngine(t *testing.T, cfg enginetest.Config) *work.Engine {
	s := work.New(append(cfg.Options(), work.WithObserver(cfg.Observer))...)
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func (inProcess) Capabilities() enginetest.Capabilities {
	return enginetest.Capabilities{
		Durable:        false,
		Attempt:        1,
		ExactWaitClock: true,
		Pools:          true,
	}
}

// TestInProcessConformance runs the conformance suite against the
// in-process engine.
func TestInProcessConformance(t *testing.T) { enginetest.Run(t, inProcess{}) }
