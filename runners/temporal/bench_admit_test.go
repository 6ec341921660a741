package temporal_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
)

// floorRegistry is the least a registry that decides admission in a
// workflow can be: its "admit" update returns at once; "admit-child"
// starts the admitted workflow as an abandoned child and returns once the
// server recorded its start; "admit-initiate" returns as soon as the
// child's start is initiated (in the same workflow task); "admit-local"
// starts it with c from a local activity, the update completing with the
// workflow task that records the activity's result.
func floorRegistry(c client.Client) func(workflow.Context) error {
	start := func(ctx context.Context, id string) error {
		_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "bare"}, "bare", "x")
		return err
	}
	return func(ctx workflow.Context) error { return floorRun(ctx, start) }
}

func floorRun(ctx workflow.Context, start func(context.Context, string) error) error {
	n := 0
	children := map[string]workflow.ChildWorkflowFuture{}
	if err := workflow.SetUpdateHandler(ctx, "admit", func(ctx workflow.Context) (int, error) {
		n++
		return n, nil
	}); err != nil {
		return err
	}
	child := func(ctx workflow.Context, id, typ string) workflow.ChildWorkflowFuture {
		n++
		var args []any
		if typ == "bare" {
			args = []any{"x"}
		}
		f := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID: id, TaskQueue: "bare", ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
		}), typ, args...)
		children[id] = f
		return f
	}
	// settle returns when the child id has ended (the registry has
	// recorded it).
	if err := workflow.SetUpdateHandler(ctx, "settle", func(ctx workflow.Context, id string) error {
		f, ok := children[id]
		if !ok {
			return errors.New("no child " + id)
		}
		delete(children, id)
		return f.Get(ctx, nil)
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, "admit-child", func(ctx workflow.Context, id, typ string) (int, error) {
		return n, child(ctx, id, typ).GetChildWorkflowExecution().Get(ctx, nil)
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, "admit-initiate", func(ctx workflow.Context, id, typ string) (int, error) {
		child(ctx, id, typ)
		return n, nil
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, "admit-local", func(ctx workflow.Context, id, _ string) (int, error) {
		n++
		return n, workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
			StartToCloseTimeout: time.Minute}), start, id).Get(ctx, nil)
	}); err != nil {
		return err
	}
	return workflow.Await(ctx, func() bool { return false })
}

// holdWorkflow is the child the floor registry starts: it runs until the
// benchmark ends, so that no child's completion reaches the registry
// while another arm is measured.
func holdWorkflow(ctx workflow.Context) error {
	return workflow.Await(ctx, func() bool { return false })
}

// BenchmarkAdmission measures start -> work.ref through the runner
// beside the floors of the designs an admission can have, interleaved on
// one dev server and reported as medians (us) and as ratios to a
// bare workflow start: a bare start; an update on a running workflow
// whose handler returns at once (plain, and update-with-start as the
// runner sends it); that update then a client start (the runner's shape);
// an update whose handler starts the workflow as an abandoned child and
// returns when its start is recorded; one that returns when the child's
// start is only initiated (unstarted-%: how many of those Refs named no
// workflow yet when the caller had them); and one that starts it from a
// local activity. events/admit is the registry's history events per
// admission. docs/notes/durable-cost-admission.md has the figures.
func BenchmarkAdmission(b *testing.B) {
	c := benchServer(b)
	echo := func(_ context.Context, in string) (string, error) { return in, nil }
	w := worker.New(c, "bare", worker.Options{})
	w.RegisterWorkflowWithOptions(bareWorkflow, workflow.RegisterOptions{Name: "bare"})
	w.RegisterWorkflowWithOptions(holdWorkflow, workflow.RegisterOptions{Name: "hold"})
	w.RegisterActivityWithOptions(echo, activity.RegisterOptions{Name: "bare.echo"})
	// The registry has a worker of its own, as the runner's has.
	fw := worker.New(c, "floor", worker.Options{})
	fw.RegisterWorkflowWithOptions(floorRegistry(c), workflow.RegisterOptions{Name: "floor"})
	for _, w := range []worker.Worker{w, fw} {
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
	o := work.NewOwner("bench-admit")
	spec := work.Spec{Owner: o, Target: work.Target{Label: "echo", Kind: work.KindFunction}, Input: "x",
		Run: func(context.Context) (string, error) { return "x", nil }}
	ctx := context.Background()
	settle := func(run client.WorkflowRun) func() {
		return func() {
			if err := run.Get(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	bare := func() func() {
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "bare"}, "bare", "x")
		if err != nil {
			b.Fatal(err)
		}
		return settle(run)
	}
	runner := func() func() {
		ref, err := eng.Start(ctx, spec)
		if err != nil {
			b.Fatal(err)
		}
		return func() {
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
	seq, unstarted, initiated := 0, 0, 0
	for _, group := range []string{"floor", "initiate", "initiate-hold", "child", "local"} {
		floor := client.StartWorkflowOptions{ID: "floor-" + group, TaskQueue: "floor",
			WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING}
		if _, err := c.ExecuteWorkflow(ctx, floor, "floor"); err != nil {
			b.Fatal(err)
		}
		defer func() { _ = c.TerminateWorkflow(context.Background(), floor.ID, "", "bench done") }()
		update := func(name string, args ...any) {
			h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: floor.ID, UpdateName: name,
				WaitForStage: client.WorkflowUpdateStageCompleted, Args: args})
			if err == nil {
				err = h.Get(ctx, nil)
			}
			if err != nil {
				b.Fatal(name, err)
			}
		}
		child := func(name, typ string) func() func() {
			return func() func() {
				seq++
				id := "floor-child-" + strconv.Itoa(seq)
				update(name, id, typ)
				switch {
				case name == "admit-initiate":
					// Is the Ref's workflow there when the caller has it?
					_, err := c.DescribeWorkflowExecution(ctx, id, "")
					var nf *serviceerror.NotFound
					if errors.As(err, &nf) {
						unstarted++
					}
					initiated++
				case name == "admit-local":
					return settle(c.GetWorkflow(ctx, id, ""))
				}
				if typ == "hold" {
					return nil
				}
				return func() { update("settle", id) }
			}
		}
		var arms []arm
		switch group {
		case "floor":
			arms = []arm{{"bare", bare}, {"update", func() func() { update("admit"); return nil }}, {"uws", func() func() {
				h, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
					StartWorkflowOperation: c.NewWithStartWorkflowOperation(floor, "floor"),
					UpdateOptions: client.UpdateWorkflowOptions{WorkflowID: floor.ID, UpdateName: "admit",
						WaitForStage: client.WorkflowUpdateStageCompleted}})
				if err == nil {
					err = h.Get(ctx, nil)
				}
				if err != nil {
					b.Fatal(err)
				}
				return nil
			}}, {"update+start", func() func() { update("admit"); return bare() }}, {"runner", runner}}
		case "initiate":
			// Its children end at once, as Works do: their started and
			// completed events reach the registry while the next
			// admissions (the update arm) are decided.
			arms = []arm{{"bare", bare}, {"initiate", child("admit-initiate", "bare")},
				{"update", func() func() { update("admit"); return nil }}, {"runner", runner}}
		case "initiate-hold":
			arms = []arm{{"bare", bare}, {"initiate", child("admit-initiate", "hold")}, {"runner", runner}}
		case "local":
			arms = []arm{{"bare", bare}, {"local", child("admit-local", "bare")}, {"runner", runner}}
		case "child":
			arms = []arm{{"bare", bare}, {"child", child("admit-child", "hold")}, {"runner", runner}}
		}
		// The admissions each round sends the registry, for its history's
		// events per admission (none where other updates share it).
		perRound := map[string]int{"floor": 3, "initiate-hold": 1, "child": 1, "local": 1}[group]
		b.Run(group, func(b *testing.B) {
			unstarted, initiated = 0, 0
			from := historyLength(b, c, floor.ID)
			measure(b, arms)
			if initiated > 0 {
				b.ReportMetric(100*float64(unstarted)/float64(initiated), "unstarted-%")
			}
			if perRound > 0 {
				b.ReportMetric(float64(historyLength(b, c, floor.ID)-from)/float64(b.N*perRound), "events/admit")
			}
		})
	}
}

func historyLength(b *testing.B, c client.Client, id string) int64 {
	d, err := c.DescribeWorkflowExecution(context.Background(), id, "")
	if err != nil {
		b.Fatal(err)
	}
	return d.GetWorkflowExecutionInfo().GetHistoryLength()
}

// arm is one measured call: run returns what waits, unmeasured, until the
// workflows it started have ended (nil: nothing), so that no arm pays for
// the previous one's work.
type arm struct {
	name string
	run  func() func()
}

// measure runs arms interleaved (all see the same load) and reports each
// one's median (us) and its ratio to the first arm's.
func measure(b *testing.B, arms []arm) {
	took := make([][]time.Duration, len(arms))
	for b.Loop() {
		for i, a := range arms { // interleaved: all see the same load
			t0 := time.Now()
			settle := a.run()
			took[i] = append(took[i], time.Since(t0))
			if settle != nil {
				settle()
			}
		}
	}
	med := make([]time.Duration, len(arms))
	for i := range arms {
		slices.Sort(took[i])
		med[i] = took[i][len(took[i])/2]
		b.ReportMetric(float64(med[i].Microseconds()), arms[i].name+"-us")
	}
	for i := 1; i < len(arms); i++ {
		b.ReportMetric(float64(med[i])/float64(med[0]), arms[i].name+"/bare")
	}
}
