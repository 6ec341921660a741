package work_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
)

// A Result must not return a terminal answer before the Observer has seen
// the terminal event and the owner's Subscription has its notice, on each
// of its paths: the Work already terminal when Result looks (with no wait
// and with one: the emit-lock check), and Result waiting as it settles
// (the done channel closes after the delivery).
func TestResultNotAheadOfDelivery(t *testing.T) {
	for _, how := range []string{"terminal/no-wait", "terminal/wait", "waiting"} {
		t.Run(how, func(t *testing.T) {
			x := startGated(t)
			clk, g, s, o, ref, proceed := x.clk, x.g, x.s, x.o, x.ref, x.proceed
			sub, err := s.Subscribe(o, 1) // before the child can end: it waits for proceed
			if err != nil {
				t.Fatal(err)
			}
			type answer struct {
				st        work.State
				delivered bool
				noticed   bool
			}
			res := make(chan answer, 1)
			result := func(timeout time.Duration) {
				st, _, _ := s.Result(context.Background(), o, ref.ID, timeout)
				a := answer{st: st.State, delivered: g.delivered.Load()}
				select {
				case <-sub.C():
					a.noticed = true
				default:
				}
				res <- a
			}
			switch how {
			case "waiting":
				go result(10 * time.Second)
				clk.BlockUntil(1) // Result waits (its timer is the only one)
				close(proceed)
				<-g.entered
			default:
				close(proceed)
				<-g.entered // terminal; the failed event is being delivered
				timeout := time.Duration(0)
				if how == "terminal/wait" {
					timeout = 10 * time.Second
				}
				go result(timeout)
			}
			var a answer
			select {
			case a = <-res:
				close(g.release)
			case <-time.After(100 * time.Millisecond): // Result rightly still waits
				close(g.release)
				a = <-res
			}
			if a.st != work.StateFailed {
				t.Fatalf("Result = %s", a.st)
			}
			if !a.delivered {
				t.Fatal("Result reported failed before the Observer saw the terminal event")
			}
			if !a.noticed {
				t.Fatal("Result reported failed before the Subscription had its notice")
			}
		})
	}
}
