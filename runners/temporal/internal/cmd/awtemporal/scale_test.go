//go:build integration

package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestIntegrationScale runs AGENTWORK_SCALE Works (1 means 1,000), ten
// per owner, each a trivial function child (echo), through two worker
// processes on the Temporal CLI's dev server, and measures the wall time
// from the first start until every result is read; beside it, in the same
// run and from the same number of callers, as many bare workflows that
// run one activity on a task queue of their own (scale.go), each read
// once. Each owner's caller starts its ten, then reads their results.
// Rounds (AGENTWORK_SCALE_ROUNDS, at least 2) interleave the bare run and
// the Works' run; the fastest of each is reported. It prints "costrow" lines
// (cmd/costtable). make bench-temporal runs it at 1,000;
// make integration-temporal at 50.
func TestIntegrationScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("AGENTWORK_SCALE"))
	temporalBin, self := os.Getenv("TEMPORAL_BIN"), os.Getenv("AWTEMPORAL_BIN")
	if n <= 0 || temporalBin == "" || self == "" {
		t.Skip("set AGENTWORK_SCALE=N, TEMPORAL_BIN and AWTEMPORAL_BIN to measure")
	}
	if n == 1 {
		n = 1000
	}
	const perOwner = 10
	owners := max(n/perOwner, 1)
	n = owners * perOwner
	dir := os.Getenv("AWTEMPORAL_LOGS")
	if dir == "" {
		dir = t.TempDir()
	}
	cl := newCluster(self, dir)
	t.Cleanup(cl.stop)
	if err := cl.startServer(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"worker-a", "worker-b"} {
		if _, err := cl.startWorker(name, "-bare"); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.Dial(client.Options{HostPort: cl.hostPort, Namespace: namespace, DataConverter: dataConverter(), Logger: slogAdapter{nopLogger()}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	eng := temporal.New(c, append(options(cl.queue, observe.NopObserver{}), temporal.WithNamespace(namespace),
		temporal.WithOptions(work.WithMaxOutstanding(1<<20)), temporal.WithOptions(work.WithMaxStarts(0)), temporal.WithRPCTimeout(time.Minute))...)
	defer eng.Close(context.Background())
	run, stopRun := context.WithTimeout(t.Context(), 20*time.Minute)
	defer stopRun()
	// each runs f for every owner at once and returns the wall time.
	each := func(f func(owner int) error) time.Duration {
		began := time.Now()
		var wg sync.WaitGroup
		for o := range owners {
			wg.Go(func() {
				if err := f(o); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		return time.Since(began)
	}
	bareRound := func(stamp string) time.Duration {
		return each(func(o int) error {
			var runs []client.WorkflowRun
			for i := range perOwner {
				r, err := c.ExecuteWorkflow(run, client.StartWorkflowOptions{ID: fmt.Sprintf("bare-%s-%d-%d", stamp, o, i),
					TaskQueue: bareQueue(cl.queue)}, bareWorkflowName, "x")
				if err != nil {
					return err
				}
				runs = append(runs, r)
			}
			for _, r := range runs {
				var out string
				if err := r.Get(run, &out); err != nil || out != "x" {
					return fmt.Errorf("bare workflow: %q, %v", out, err)
				}
			}
			return nil
		})
	}
	oursRound := func(stamp string) time.Duration {
		return each(func(o int) error {
			owner := work.NewOwner(fmt.Sprintf("scale-%s-%d", stamp, o))
			var ids []string
			for range perOwner {
				ref, err := eng.Start(run, work.Spec{Owner: owner, Target: work.Target{Label: "echo", Kind: work.KindFunction},
					Input: "x", Run: func(context.Context) (string, error) { return "x", nil }})
				if err != nil {
					return err
				}
				ids = append(ids, ref.ID)
			}
			for _, id := range ids {
				for {
					st, out, err := eng.Result(run, owner, id, work.MaxResultWait)
					if err != nil {
						return err
					}
					if st.State.Terminal() {
						if st.State != work.StateCompleted || out != "x" {
							return fmt.Errorf("work %s: %s %q", id, st.State, out)
						}
						break
					}
				}
			}
			return nil
		})
	}
	rounds, _ := strconv.Atoi(os.Getenv("AGENTWORK_SCALE_ROUNDS"))
	var bare, ours time.Duration
	for r := range max(rounds, 2) { // interleaved; the first round warms the server's queues up
		stamp := strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.Itoa(r)
		b, o := bareRound(stamp), oursRound(stamp)
		t.Logf("round %d: %d Works %v, %d bare workflows %v", r, n, o.Round(time.Millisecond), n, b.Round(time.Millisecond))
		if r == 0 || b < bare {
			bare = b
		}
		if r == 0 || o < ours {
			ours = o
		}
	}
	t.Logf("fastest: %d Works (%d owners x %d) through two worker processes: %v; %d bare workflows: %v (%.2fx)",
		n, owners, perOwner, ours.Round(time.Millisecond), n, bare.Round(time.Millisecond), ours.Seconds()/bare.Seconds())
	fmt.Printf("costrow\tscale: wall time to all results read (s)\t%d Works, %d owners x %d, two worker processes\t%.4g\t%.4g\t<=1.5x\n",
		n, owners, perOwner, ours.Seconds(), bare.Seconds())
}
