package temporal_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/runners/temporal/testserver"
	"github.com/agentwork/agentwork/work"
)

func bareWorkflow(ctx workflow.Context, in string) (string, error) {
	var out string
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute}), "bare.echo", in).Get(ctx, &out)
	return out, err
}

// bareRemoteWorkflow runs its activity on a task queue of its own, as the
// runner runs a child on the workers that registered its target (the
// server then cannot hand the activity to the workflow's worker eagerly).
func bareRemoteWorkflow(ctx workflow.Context, in string) (string, error) {
	var out string
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue: "bare.remote", StartToCloseTimeout: time.Minute}), "bare.echo", in).Get(ctx, &out)
	return out, err
}

// BenchmarkTemporal measures, on one Temporal dev server and in the
// same run, start -> WorkRef and start -> result through the runner beside
// a bare Temporal workflow (one activity) start and start -> result. The
// figures are the medians of the interleaved rounds (one of each a
// round), and the ratios runner/bare (goal: within 1.2x) and
// runner/remote, the bare workflow whose activity runs on a task queue of
// its own, the shape the runner has, are ratios of the medians.
func BenchmarkTemporal(b *testing.B) {
	c := benchServer(b)
	echo := func(_ context.Context, in string) (string, error) { return in, nil }
	w := worker.New(c, "bare", worker.Options{})
	w.RegisterWorkflowWithOptions(bareWorkflow, workflow.RegisterOptions{Name: "bare"})
	w.RegisterWorkflowWithOptions(bareRemoteWorkflow, workflow.RegisterOptions{Name: "bare.remote"})
	w.RegisterActivityWithOptions(echo, activity.RegisterOptions{Name: "bare.echo"})
	rw := worker.New(c, "bare.remote", worker.Options{})
	rw.RegisterActivityWithOptions(echo, activity.RegisterOptions{Name: "bare.echo"})
	for _, w := range []worker.Worker{w, rw} {
		if err := w.Start(); err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
	}
	opts := []temporal.Option{temporal.WithTaskQueue("bench"), temporal.WithOptions(work.WithMaxStarts(0)),
		temporal.WithOptions(work.WithMaxOutstanding(1 << 20)), temporal.WithOptions(work.WithRetention(16, 0))}
	aw, err := temporal.NewWorker(c, map[string]temporal.Child{
		"echo": {Kind: work.KindFunction, Run: func(_ context.Context, in string) (string, error) { return in, nil }},
	}, opts...)
	if err != nil || aw.Start() != nil {
		b.Fatal("worker", err)
	}
	defer aw.Stop()
	eng := temporal.New(c, opts...)
	defer eng.Close(context.Background())
	o := work.NewOwner("bench")
	spec := work.Spec{Owner: o, Target: work.Target{Label: "echo", Kind: work.KindFunction}, Input: "x",
		Run: func(context.Context) (string, error) { return "x", nil }}
	ctx := context.Background()
	bareStart := func(name string, wait bool) {
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "bare"}, name, "x")
		if err != nil {
			b.Fatal(err)
		}
		if wait {
			var out string
			if err := run.Get(ctx, &out); err != nil {
				b.Fatal(err)
			}
		}
	}
	runnerStart := func(wait bool) {
		ref, err := eng.Start(ctx, spec)
		if err != nil {
			b.Fatal(err)
		}
		if wait {
			for {
				st, _, err := eng.Result(ctx, o, ref.ID, work.MaxResultWait)
				if err != nil {
					b.Fatal(err)
				}
				if st.State.Terminal() {
					return
				}
			}
		}
	}
	for _, tc := range []struct {
		name string
		wait bool
	}{{"start", false}, {"result", true}} {
		b.Run(tc.name, func(b *testing.B) {
			var bare, remote, runner []time.Duration
			for b.Loop() {
				// Interleaved, so that all see the same load.
				t0 := time.Now()
				bareStart("bare", tc.wait)
				t1 := time.Now()
				bareStart("bare.remote", tc.wait)
				t2 := time.Now()
				runnerStart(tc.wait)
				runner = append(runner, time.Since(t2))
				remote = append(remote, t2.Sub(t1))
				bare = append(bare, t1.Sub(t0))
			}
			mb, mr, mo := median(bare), median(remote), median(runner)
			b.ReportMetric(float64(mb.Microseconds()), "bare-us/op")
			b.ReportMetric(float64(mr.Microseconds()), "remote-us/op")
			b.ReportMetric(float64(mo.Microseconds()), "runner-us/op")
			b.ReportMetric(float64(mo)/float64(mb), "runner/bare")
			b.ReportMetric(float64(mo)/float64(mr), "runner/remote")
		})
	}
}

// median is the median of ds (which it sorts).
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// benchServer is a dev server of the benchmark's own; its end stops it.
func benchServer(b *testing.B) client.Client {
	srv, err := testserver.Start()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Stop)
	return srv.Client()
}
