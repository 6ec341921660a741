package temporal_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
)

// TestCostAdmission measures one owner's admission throughput: N Starts
// (AGENTWORK_COST_ADMIT, default 100) of trivial function Works against
// one registry, from one caller and then from AGENTWORK_COST_CALLERS
// concurrent callers (default 8), the Works running on a worker meanwhile
// (their records reach the same registry), with the registry continuing
// as new every AGENTWORK_COST_OWNER_HISTORY events (default 400; 0 keeps
// the runner's own bound) so that each run crosses continues-as-new.
// Beside each, as many bare workflow starts from the same callers. A
// Start that fails (the registry's updates refused under load) is counted
// and reported, not retried. It prints "costrow" lines; set
// AGENTWORK_COST.
func TestCostAdmission(t *testing.T) {
	if os.Getenv("AGENTWORK_COST") == "" {
		t.Skip("set AGENTWORK_COST=N to measure")
	}
	n, _ := strconv.Atoi(os.Getenv("AGENTWORK_COST_ADMIT"))
	if n <= 0 {
		n = 100
	}
	many, _ := strconv.Atoi(os.Getenv("AGENTWORK_COST_CALLERS"))
	if many <= 0 {
		many = 8
	}
	h, err := strconv.Atoi(os.Getenv("AGENTWORK_COST_OWNER_HISTORY"))
	if err != nil {
		h = 400
	}
	if h > 0 {
		t.Cleanup(temporal.SetMaxOwnerHistory(h))
	}
	env := newCostEnv(t, temporal.WithRPCTimeout(time.Minute), temporal.WithOptions(work.WithRetention(n, 0)))
	for _, callers := range []int{1, many} {
		o := env.owner("admit-" + strconv.Itoa(callers))
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
		var refused atomic.Int64
		c := costChildren["echo"]
		env.k.begin()
		ours := each(func(int) {
			ref, err := env.eng.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "echo", Kind: c.Kind},
				Input: "x", Run: func(ctx context.Context) (string, error) { return c.Run(ctx, "x") }})
			if err != nil {
				refused.Add(1)
				return
			}
			mu.Lock()
			ids = append(ids, ref.ID)
			mu.Unlock()
		})
		calls, _, _ := env.k.end()
		t.Logf("%d callers: calls %v, failed %v", callers, calls, env.k.failures())
		bare := each(func(i int) {
			if _, err := env.ec.ExecuteWorkflow(t.Context(), client.StartWorkflowOptions{
				ID: "bare-admit-" + o.ID() + "-" + strconv.Itoa(i), TaskQueue: env.queue + "-bare"}, "bare.remote", "x"); err != nil {
				t.Error(err)
			}
		})
		for _, id := range ids {
			if st, _ := env.result(o, id); st.State != work.StateCompleted {
				t.Fatalf("admitted Work %s: %s", id, st.State)
			}
		}
		cont := runs(workflowHistory(t, env.reader, "agentwork-owner/"+o.ID())) - 1
		if cont < 1 && h > 0 && len(ids) > 0 {
			t.Fatalf("the registry did not continue as new during %d admissions", len(ids))
		}
		perSec := func(k int, d time.Duration) float64 { return float64(k) / d.Seconds() }
		t.Logf("%d callers: %d of %d Starts admitted by one owner in %v (%.1f/s) across %d continues-as-new, %d failed; %d bare starts in %v (%.1f/s)",
			callers, len(ids), n, ours.Round(time.Millisecond), perSec(len(ids), ours), cont, refused.Load(),
			n, bare.Round(time.Millisecond), perSec(n, bare))
		what := []string{strconv.Itoa(n) + " Starts from " + strconv.Itoa(callers) + " caller(s)", strconv.Itoa(cont) + " continues-as-new"}
		if r := refused.Load(); r > 0 {
			what = append(what, strconv.FormatInt(r, 10)+" failed")
		}
		costRow("admissions/s, one owner", strings.Join(what, ", "), perSec(len(ids), ours), perSec(n, bare), ">=50/s")
	}
}
