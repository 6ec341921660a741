package temporal_test

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
)

// latencyRun is one run of the latency tests' child, keyed by its input.
type latencyRun struct {
	started  chan struct{}
	done     chan time.Time // when the child's context was done
	boundary chan struct{}  // latencyBoundary: take the boundary now
	seen     chan [2]bool   // latencyBoundary: ctx done before, after the boundary's guidance
}

var latencyRuns sync.Map // input -> *latencyRun

func newLatencyRun(t *testing.T, input string) *latencyRun {
	r := &latencyRun{started: make(chan struct{}), done: make(chan time.Time, 1),
		boundary: make(chan struct{}), seen: make(chan [2]bool, 1)}
	latencyRuns.Store(input, r)
	t.Cleanup(func() { latencyRuns.Delete(input) })
	return r
}

var latencyChildren = map[string]temporal.Child{
	// wait runs until its context is done.
	"wait": {Kind: work.KindAgent, Run: func(ctx context.Context, in string) (string, error) {
		v, _ := latencyRuns.Load(in)
		r := v.(*latencyRun)
		close(r.started)
		<-ctx.Done()
		r.done <- time.Now()
		return "", ctx.Err()
	}},
	// boundary takes one model-request boundary when told, as the
	// langchaingo adapter does (the context's check, BeginRequest, the
	// guidance), and reports whether its context was done before the
	// boundary and when the request would go out.
	"boundary": {Kind: work.KindAgent, Run: func(ctx context.Context, in string) (string, error) {
		v, _ := latencyRuns.Load(in)
		r := v.(*latencyRun)
		close(r.started)
		<-r.boundary
		before := ctx.Err() != nil
		ex, _ := work.ExecutionFrom(ctx)
		_, _ = boundary.BeginRequest(ex)
		_ = boundary.Guidance(ex)
		r.seen <- [2]bool{before, ctx.Err() != nil}
		<-ctx.Done()
		return "", ctx.Err()
	}},
}

// TestCancelLatency measures how long a cancel takes to reach a running
// child (Engine.Cancel returning -> the child's context done) at the
// default heartbeat timeout and at 5 s, with the cancel at a random point
// of the heartbeat period. Set AGENTWORK_CANCEL_LATENCY=N (runs per
// timeout; 1 means 20).
func TestCancelLatency(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("AGENTWORK_CANCEL_LATENCY"))
	if n <= 0 {
		t.Skip("set AGENTWORK_CANCEL_LATENCY=N to measure")
	}
	if n == 1 {
		n = 20
	}
	for _, hb := range []time.Duration{temporal.DefaultHeartbeatTimeout, 5 * time.Second} {
		t.Run(hb.String(), func(t *testing.T) {
			eng, _ := deploy(t, "latency", latencyChildren, []temporal.Option{temporal.WithHeartbeatTimeout(hb)},
				[]temporal.Option{temporal.WithHeartbeatTimeout(hb)})
			o := work.NewOwner("latency-" + strconv.FormatInt(time.Now().UnixNano(), 36))
			var took []time.Duration
			for i := range n {
				in := o.ID() + "-" + strconv.Itoa(i)
				r := newLatencyRun(t, in)
				ref, err := eng.Start(t.Context(), latencySpec(o, "wait", in))
				if err != nil {
					t.Fatal(err)
				}
				<-r.started
				time.Sleep(rand.N(hb / 3)) // anywhere in the heartbeat period
				if _, err := eng.Cancel(t.Context(), o, ref.ID); err != nil {
					t.Fatal(err)
				}
				at := time.Now()
				took = append(took, (<-r.done).Sub(at))
				if st, _, err := eng.Result(t.Context(), o, ref.ID, work.MaxResultWait); err != nil || st.State != work.StateCancelled {
					t.Fatalf("cancelled Work: %s, %v", st.State, err)
				}
			}
			slices.Sort(took)
			t.Logf("heartbeat timeout %v, %d cancels: min %v median %v max %v (bound: a third, %v)",
				hb, n, took[0].Round(time.Millisecond), took[n/2].Round(time.Millisecond),
				took[n-1].Round(time.Millisecond), hb/3)
		})
	}
}

// TestCancelAtBoundary cancels a running agent child and lets it take a
// model-request boundary after the SDK's heartbeat throttle has passed
// and before the next periodic heartbeat: the boundary's heartbeat brings
// the cancel. It reports, per run, whether the child's context was done
// before the boundary (the adapter's own check) and after its guidance
// (when the request would go out). Set AGENTWORK_CANCEL_LATENCY.
func TestCancelAtBoundary(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("AGENTWORK_CANCEL_LATENCY"))
	if n <= 0 {
		t.Skip("set AGENTWORK_CANCEL_LATENCY=N to measure")
	}
	if n == 1 {
		n = 5
	}
	hb := temporal.DefaultHeartbeatTimeout // throttle hb/5, periodic beats hb/3
	eng, _ := deploy(t, "boundary", latencyChildren, []temporal.Option{temporal.WithHeartbeatTimeout(hb)},
		[]temporal.Option{temporal.WithHeartbeatTimeout(hb)})
	o := work.NewOwner("boundary-" + strconv.FormatInt(time.Now().UnixNano(), 36))
	stopped := 0
	for i := range n {
		in := o.ID() + "-" + strconv.Itoa(i)
		r := newLatencyRun(t, in)
		ref, err := eng.Start(t.Context(), latencySpec(o, "boundary", in))
		if err != nil {
			t.Fatal(err)
		}
		<-r.started
		began := time.Now()
		if _, err := eng.Cancel(t.Context(), o, ref.ID); err != nil {
			t.Fatal(err)
		}
		// The attempt's first beat went just before the child started.
		time.Sleep(hb/5 + hb/3/4 - time.Since(began))
		close(r.boundary)
		seen := <-r.seen
		t.Logf("run %d: ctx done before the boundary %v, when the request would go out %v", i, seen[0], seen[1])
		if !seen[0] && seen[1] {
			stopped++
		}
		if st, _, err := eng.Result(t.Context(), o, ref.ID, work.MaxResultWait); err != nil || st.State != work.StateCancelled {
			t.Fatalf("cancelled Work: %s, %v", st.State, err)
		}
	}
	t.Logf("%d of %d boundaries brought the cancel and stopped their request", stopped, n)
}

func latencySpec(o work.Owner, label, in string) work.Spec {
	c := latencyChildren[label]
	return work.Spec{Owner: o, Target: work.Target{Label: label, Kind: c.Kind}, Input: in,
		Run: func(ctx context.Context) (string, error) { return c.Run(ctx, in) }}
}
