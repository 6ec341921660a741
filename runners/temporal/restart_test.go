package temporal_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/runners/temporal/internal/testcodec"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
)

// TestCoordinatorRestart: a coordinator (client and Engine) goes away while
// its Work runs and completes; a new one with the same owner id lists it,
// reads its result and can still cancel and steer its other Work. Every
// client is dialed with the test codec (internal/testcodec).
func TestCoordinatorRestart(t *testing.T) {
	_, hostPort, ns := serverWithAddr(t)
	dc := testcodec.Converter() // every client under the test codec (internal/testcodec)
	dial := func() client.Client {
		c, err := client.Dial(client.Options{HostPort: hostPort, Namespace: ns, DataConverter: dc})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	opts := []temporal.Option{temporal.WithTaskQueue("restart"), temporal.WithHeartbeatTimeout(5 * time.Second), temporal.WithDataConverter(dc)}
	release := make(chan struct{})
	steered := make(chan []string, 1)
	wc := dial()
	defer wc.Close()
	w, err := temporal.NewWorker(wc, map[string]temporal.Child{
		"gated": {Kind: work.KindFunction, Run: func(ctx context.Context, in string) (string, error) {
			<-release
			return "done while the coordinator was down: " + in, nil
		}},
		"agent": {Kind: work.KindAgent, Run: func(ctx context.Context, _ string) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			for {
				if g := boundary.Guidance(ex); len(g) > 0 {
					steered <- g
				}
				select {
				case <-ctx.Done():
					return "", ctx.Err()
				case <-time.After(20 * time.Millisecond):
				}
			}
		}},
	}, opts...)
	if err != nil || w.Start() != nil {
		t.Fatal("worker", err)
	}
	defer w.Stop()
	o := work.NewOwner("restarting-coordinator")
	spec := func(label string) work.Spec {
		kind := work.KindFunction
		if label == "agent" {
			kind = work.KindAgent
		}
		return work.Spec{Owner: o, Target: work.Target{Label: label, Kind: kind}, Input: "x",
			Run: func(context.Context) (string, error) { return "", nil }}
	}
	c1 := dial()
	e1 := temporal.New(c1, opts...)
	gated, err := e1.Start(context.Background(), spec("gated"))
	if err != nil {
		t.Fatal(err)
	}
	agent, err := e1.Start(context.Background(), spec("agent"))
	if err != nil {
		t.Fatal(err)
	}
	_ = e1.Close(context.Background())
	c1.Close() // the coordinator is gone
	close(release)
	// The Work completes while no coordinator runs: wait on Temporal.
	if err := wc.GetWorkflow(context.Background(), gated.ID, "").Get(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	c2 := dial()
	defer c2.Close()
	e2 := temporal.New(c2, opts...)
	defer e2.Close(context.Background())
	l, err := e2.List(t.Context(), o)
	if err != nil || len(l) != 2 {
		t.Fatalf("List after restart = %d, %v", len(l), err)
	}
	st, out, err := e2.Result(context.Background(), o, gated.ID, 0)
	if err != nil || st.State != work.StateCompleted || out != "done while the coordinator was down: x" {
		t.Fatalf("Result after restart = %s %q %v", st.State, out, err)
	}
	if _, err := e2.Send(t.Context(), o, agent.ID, "c1", "after the restart"); err != nil {
		t.Fatal(err)
	}
	if g := <-steered; len(g) != 1 || g[0] != "after the restart" {
		t.Fatalf("guidance after restart = %q", g)
	}
	if r, err := e2.Cancel(t.Context(), o, agent.ID); err != nil || !r.Accepted {
		t.Fatalf("Cancel after restart = %+v, %v", r, err)
	}
	for {
		st, _, err := e2.Result(context.Background(), o, agent.ID, work.MaxResultWait)
		if err != nil {
			t.Fatal(err)
		}
		if st.State.Terminal() {
			if st.State != work.StateCancelled {
				t.Fatalf("cancelled after restart: %s", st.State)
			}
			break
		}
	}
}
