package temporal_test

import (
	"context"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
)

// TestCostAdmission measures one owner's admission throughput: N Starts
// (AGENTWORK_COST_ADMIT, default 300; make bench-temporal: 200) of trivial function Works from 8
// concurrent callers against one registry, whose history is set to
// continue as new every 400 events so that the run crosses several
// continues-as-new, the Works running on a worker meanwhile (their
// records reach the same registry). Beside it, bare workflow starts from
// the same 8 callers. It prints a "costrow" line; set AGENTWORK_COST.
func TestCostAdmission(t *testing.T) {
	if os.Getenv("AGENTWORK_COST") == "" {
		t.Skip("set AGENTWORK_COST=N to measure")
	}
	n, _ := strconv.Atoi(os.Getenv("AGENTWORK_COST_ADMIT"))
	if n <= 0 {
		n = 300
	}
	callers, _ := strconv.Atoi(os.Getenv("AGENTWORK_COST_CALLERS"))
	if callers <= 0 {
		callers = 8
	}
	if h, _ := strconv.Atoi(os.Getenv("AGENTWORK_COST_OWNER_HISTORY")); h > 0 {
		t.Cleanup(temporal.SetMaxOwnerHistory(h))
	}
	env := newCostEnv(t, temporal.WithRPCTimeout(time.Minute), temporal.WithRetention(n, 0))
	o := env.owner("admit")
	each := func(f func(i int)) time.Duration {
		began := time.Now()
		var wg sync.WaitGroup
		next := make(chan int)
		for range callers {
			wg.Go(func() {
				for i := range next {
					f(i)
				}
			})
		}
		for i := range n {
			next <- i
		}
		close(next)
		wg.Wait()
		return time.Since(began)
	}
	var mu sync.Mutex
	var ids []string
	c := costChildren["echo"]
	env.k.begin()
	ours := each(func(int) {
		ref, err := env.eng.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "echo", Kind: c.Kind},
			Input: "x", Run: func(ctx context.Context) (string, error) { return c.Run(ctx, "x") }})
		if err != nil {
			t.Errorf("admission: %v", err)
			return
		}
		mu.Lock()
		ids = append(ids, ref.ID)
		mu.Unlock()
	})
	bare := each(func(i int) {
		if _, err := env.ec.ExecuteWorkflow(t.Context(), client.StartWorkflowOptions{ID: "bare-admit-" + env.queue + "-" + strconv.Itoa(i),
			TaskQueue: env.queue + "-bare"}, "bare.remote", "x"); err != nil {
			t.Error(err)
		}
	})
	calls, _, _ := env.k.end()
	t.Logf("calls %v, failed %v", calls, env.k.failures())
	for _, id := range ids {
		if st, _ := env.result(o, id); st.State != work.StateCompleted {
			t.Fatalf("admitted Work %s: %s", id, st.State)
		}
	}
	cont := runs(workflowHistory(t, env.reader, "agentwork-owner/"+o.ID())) - 1
	if cont < 1 && os.Getenv("AGENTWORK_COST_OWNER_HISTORY") != "0" {
		t.Fatalf("the registry did not continue as new during %d admissions", n)
	}
	perSec := func(d time.Duration) float64 { return float64(n) / d.Seconds() }
	t.Logf("%d admissions by one owner from %d callers in %v (%.1f/s) across %d continues-as-new; %d bare starts in %v (%.1f/s)",
		n, callers, ours.Round(time.Millisecond), perSec(ours), cont, n, bare.Round(time.Millisecond), perSec(bare))
	costRow("admissions/s, one owner", strconv.Itoa(n)+" Starts from "+strconv.Itoa(callers)+" callers, "+strconv.Itoa(cont)+" continues-as-new", perSec(ours), perSec(bare), ">=50/s")
}
