package restate_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

// TestSplitDeployments runs the registry services and a target on
// deployments of their own (the documented topology): a Work completes,
// another is cancelled while it runs, and the lifecycle events reach the
// registry Worker's Observer, the progress ones the target Worker's.
func TestSplitDeployments(t *testing.T) {
	s := server(t)
	regObs, runObs := &enginetest.Recorder{}, &enginetest.Recorder{}
	base := []restate.Option{restate.WithServicePrefix("split" + strconv.FormatInt(namespaces.Add(1), 10)),
		restate.WithIngress(s.Ingress), restate.WithAdmin(s.Admin)}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reg, err := restate.NewWorker(nil, append(base, restate.WithRegistry(), restate.WithOptions(work.WithObserver(regObs)))...)
	if err != nil || reg.Start(ctx) != nil {
		t.Fatal("registry", err)
	}
	defer reg.Stop()
	started := make(chan struct{}, 1)
	run, err := restate.NewWorker(map[string]restate.Child{"c": {Kind: work.KindAgent, Run: func(ctx context.Context, in string) (string, error) {
		if in == "wait" {
			work.ReportProgress(ctx, 1, 2)
			started <- struct{}{}
			<-ctx.Done()
			return "", ctx.Err()
		}
		return "done " + in, nil
	}}}, append(base, restate.WithOptions(work.WithObserver(runObs)))...)
	if err != nil || run.Start(ctx) != nil {
		t.Fatal("target", err)
	}
	defer run.Stop()
	e := restate.New(base...)
	defer func() { _ = e.Close(context.Background()) }()
	o := work.NewOwner("split-" + newToken())
	start := func(in string) work.Ref {
		ref, err := e.Start(ctx, work.Spec{Owner: o, Target: work.Target{Label: "c", Kind: work.KindAgent}, Input: in,
			Run: func(context.Context) (string, error) { return "", nil }})
		if err != nil {
			t.Fatal(err)
		}
		return ref
	}
	settle := func(ref work.Ref) (work.Status, string) {
		for {
			st, out, err := e.Result(ctx, o, ref.ID, work.MaxResultWait)
			if err != nil || ctx.Err() != nil {
				t.Fatal(err)
			}
			if st.State.Terminal() {
				return st, out
			}
		}
	}
	done := start("x")
	if st, out := settle(done); st.State != work.StateCompleted || out != "done x" {
		t.Fatalf("%+v %q", st, out)
	}
	waiting := start("wait")
	<-started
	if _, err := e.Cancel(ctx, o, waiting.ID); err != nil {
		t.Fatal(err)
	}
	if st, _ := settle(waiting); st.State != work.StateCancelled {
		t.Fatalf("cancelled: %+v", st)
	}
	count := func(r *enginetest.Recorder, typ observe.EventType) int {
		n := 0
		for _, ev := range r.Events() {
			if ev.Type == typ {
				n++
			}
		}
		return n
	}
	for _, typ := range []observe.EventType{observe.EventQueued, observe.EventRunning, observe.EventCompleted, observe.EventCancelled} {
		if count(regObs, typ) == 0 || count(runObs, typ) != 0 {
			t.Errorf("%s: %d events at the registry, %d at the target's worker; want them at the registry only",
				typ, count(regObs, typ), count(runObs, typ))
		}
	}
	if count(runObs, observe.EventProgress) == 0 {
		t.Errorf("no progress event at the target's worker")
	}
}
