package restate_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestCoordinatorRestart closes the Engine that started a Work, lets the
// Work complete meanwhile, and reads it from a new Engine with the same
// owner id: list, status, the result, and a cancel and a send of its
// live sibling all work there.
func TestCoordinatorRestart(t *testing.T) {
	s := server(t)
	release := make(chan struct{})
	opts := []restate.Option{restate.WithServicePrefix("restart" + strconv.FormatInt(namespaces.Add(1), 10)),
		restate.WithIngress(s.Ingress), restate.WithAdmin(s.Admin), restate.WithRPCTimeout(time.Minute)}
	w, err := restate.NewWorker(map[string]restate.Child{
		"quick": {Kind: work.KindFunction, Run: func(_ context.Context, in string) (string, error) {
			<-release
			return "done " + in, nil
		}},
		"long": {Kind: work.KindAgent, Run: func(ctx context.Context, _ string) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}},
	}, append(opts, restate.WithRegistry())...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err != nil || w.Start(ctx) != nil {
		t.Fatal("worker", err)
	}
	defer w.Stop()
	id := "restart-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	e1 := restate.New(opts...)
	spec := func(label string, kind observe.Kind) work.Spec {
		return work.Spec{Owner: work.NewOwner(id), Target: work.Target{Label: label, Kind: kind}, Input: "in",
			Run: func(context.Context) (string, error) { return "", nil }}
	}
	quick, err := e1.Start(ctx, spec("quick", work.KindFunction))
	if err != nil {
		t.Fatal(err)
	}
	long, err := e1.Start(ctx, spec("long", work.KindAgent))
	if err != nil {
		t.Fatal(err)
	}
	if err := e1.Close(ctx); err != nil {
		t.Fatal(err)
	}
	close(release) // completes while no coordinator runs

	e2 := restate.New(opts...)
	defer func() { _ = e2.Close(context.Background()) }()
	o := work.NewOwner(id)
	var st work.Status
	var out string
	for st.State == "" || !st.State.Terminal() {
		if st, out, err = e2.Result(ctx, o, quick.ID, work.MaxResultWait); err != nil {
			t.Fatal(err)
		}
		if ctx.Err() != nil {
			t.Fatal("not settled")
		}
	}
	if st.State != work.StateCompleted || out != "done in" {
		t.Fatalf("after the restart: %+v %q; want completed, %q", st, out, "done in")
	}
	list, err := e2.List(ctx, o)
	if err != nil || len(list) != 2 {
		t.Fatalf("List = %d, %v; want both Works", len(list), err)
	}
	if _, err := e2.Send(ctx, o, long.ID, "c1", "steer"); err != nil {
		t.Fatalf("Send from the new coordinator: %v", err)
	}
	if r, err := e2.Cancel(ctx, o, long.ID); err != nil || !r.Accepted {
		t.Fatalf("Cancel from the new coordinator: %+v, %v", r, err)
	}
	for st.State = ""; !st.State.Terminal(); {
		if st, _, err = e2.Result(ctx, o, long.ID, work.MaxResultWait); err != nil || ctx.Err() != nil {
			t.Fatal(err)
		}
	}
	if st.State != work.StateCancelled {
		t.Fatalf("the cancelled sibling: %+v", st)
	}
}
