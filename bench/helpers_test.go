package work_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// The helpers below are copies of work's own test helpers (work/
// helpers_test.go, work/memory_test.go, work/main_test.go), which the Goal
// and Floor benchmarks used when they lived in package work: this module
// holds them apart so that their comparison libraries (golang.org/x/sync,
// github.com/sourcegraph/conc) are not requirements of the root module.

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	agent = work.Target{Label: "research", Kind: work.KindAgent}
	fn    = work.Target{Label: "fetch", Kind: work.KindFunction}
)

// immediate returns a run function that returns out at once.
func immediate(out string) work.RunFunc {
	return func(context.Context) (string, error) { return out, nil }
}

// terminalSignal is an Observer that signals every terminal event and keeps
// nothing.
type terminalSignal struct {
	observe.NopObserver
	ch chan struct{}
}

func (o terminalSignal) Event(_ context.Context, e observe.Event) {
	if e.To.Terminal() {
		o.ch <- struct{}{}
	}
}
