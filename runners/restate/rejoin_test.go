package restate_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/runners/restate/restatetest"
	"github.com/agentwork/agentwork/work"
)

// TestServerRestartRejoins: the Restate server is SIGKILLed while a
// child runs, the child ends while the server is down, and the server is
// restarted on its base directory: the retried step finds the Worker
// still holding the attempt and takes it back. The Work completes with
// the child's output, attempt 1, its child run once; not worker_lost.
func TestServerRestartRejoins(t *testing.T) {
	srv, err := restatetest.StartIn(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	started, release := make(chan struct{}, 1), make(chan struct{})
	var runs atomic.Int32
	opts := []restate.Option{restate.WithServicePrefix("rejoin"), restate.WithIngress(srv.Ingress), restate.WithAdmin(srv.Admin),
		restate.WithRegistry(), restate.WithRPCTimeout(30 * time.Second)}
	w, err := restate.NewWorker(map[string]restate.Child{"gated": {Kind: work.KindFunction, Run: func(ctx context.Context, in string) (string, error) {
		runs.Add(1)
		started <- struct{}{}
		select {
		case <-release:
			return "done while the server was down: " + in, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}}}, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err != nil || w.Start(ctx) != nil {
		t.Fatal("worker", err)
	}
	defer w.Stop()
	eng := restate.New(opts...)
	defer eng.Close(context.Background())
	o := work.NewOwner("rejoin")
	ref, err := eng.Start(ctx, work.Spec{Owner: o, Target: work.Target{Label: "gated", Kind: work.KindFunction}, Input: "x",
		Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the child did not start")
	}
	srv.Kill()
	close(release)              // the child ends while the server is down
	time.Sleep(2 * time.Second) // the outage (a duration of the fault, not a synchronisation)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	var st work.Status
	var out string
	for !st.State.Terminal() {
		if st, out, err = eng.Result(ctx, o, ref.ID, work.MaxResultWait); err != nil && ctx.Err() != nil {
			t.Fatal(err)
		}
	}
	if st.State != work.StateCompleted || out != "done while the server was down: x" || st.Attempt != 1 || runs.Load() != 1 {
		t.Fatalf("after the restart: %+v %q (%d runs), want completed by attempt 1, run once", st, out, runs.Load())
	}
}
