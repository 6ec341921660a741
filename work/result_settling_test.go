package work_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwork/agentwork/internal/fakeclock"
	"github.com/agentwork/agentwork/work"
)

// gateObs holds the delivery of a Work's failed event until released.
type gateObs struct {
	work.NopObserver
	entered   chan struct{}
	release   chan struct{}
	delivered atomic.Bool
}

func (g *gateObs) Event(_ context.Context, e work.Event) {
	if e.Type == work.EventFailed {
		close(g.entered)
		<-g.release
		g.delivered.Store(true)
	}
}

// gated is a Supervisor on a fake clock whose Observer is a gateObs, with
// one Work of owner "a" whose child fails once proceed is closed.
type gated struct {
	clk     *fakeclock.Clock
	g       *gateObs
	s       *work.Supervisor
	o       work.Owner
	ref     work.Ref
	proceed chan struct{}
}

// startGated starts a gated Work; the Supervisor closes when t ends.
func startGated(t *testing.T) *gated {
	t.Helper()
	x := &gated{clk: fakeclock.New(t0), g: &gateObs{entered: make(chan struct{}), release: make(chan struct{})},
		o: work.NewOwner("a"), proceed: make(chan struct{})}
	x.s = work.New(work.WithClock(x.clk), work.WithObserver(x.g), work.WithMaxDuration(0))
	t.Cleanup(func() { x.s.Close(context.Background()) })
	var err error
	x.ref, err = x.s.Start(context.Background(), work.Spec{Owner: x.o, Target: fn,
		Run: func(context.Context) (string, error) { <-x.proceed; return "", errBoom }})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// A Result whose wait ends (by its timeout or its context) while the Work
// it waits for is settling must not report the terminal state before the
// Observer has seen the terminal event.
func TestResultWaitEndsWhileSettling(t *testing.T) {
	for _, how := range []string{"timeout", "ctx"} {
		t.Run(how, func(t *testing.T) {
			x := startGated(t)
			clk, g, s, o, ref, proceed := x.clk, x.g, x.s, x.o, x.ref, x.proceed
			type answer struct {
				st        work.State
				delivered bool
			}
			res := make(chan answer, 1)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				st, _, _ := s.Result(ctx, o, ref.ID, 10*time.Second)
				res <- answer{st.State, g.delivered.Load()}
			}()
			clk.BlockUntil(1) // Result waits (its timer is the only one)
			close(proceed)
			<-g.entered // settled; the failed event is being delivered
			if how == "timeout" {
				clk.Advance(10 * time.Second)
			} else {
				cancel()
			}
			var a answer
			select {
			case a = <-res:
			case <-time.After(300 * time.Millisecond): // Result rightly still waits
				close(g.release)
				a = <-res
				g.release = nil
			}
			if g.release != nil {
				close(g.release)
			}
			if a.st.Terminal() && !a.delivered {
				t.Fatalf("Result reported %s before the Observer saw the terminal event", a.st)
			}
		})
	}
}
