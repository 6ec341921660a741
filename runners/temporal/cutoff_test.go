package temporal_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	awharness "github.com/agentwork/agentwork/runners/harness"
	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
)

// TestCutOffWorkerRejoins: a Worker cut off from the server (a TCP proxy
// that stops forwarding, both ways) for longer than the heartbeat
// timeout, whose child ends meanwhile: Temporal times the attempt out,
// and once the Worker reaches the server again the Work's workflow takes
// the attempt back from it (a Rejoin): the Work completes with the
// child's output, attempt 1, its child run once; not worker_lost.
func TestCutOffWorkerRejoins(t *testing.T) {
	_, hostPort, ns := serverWithAddr(t)
	proxy, err := awharness.NewProxy(hostPort)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	dial := func(addr string) client.Client {
		c, err := client.Dial(client.Options{HostPort: addr, Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	const hb = 2 * time.Second
	opts := []temporal.Option{temporal.WithTaskQueue("cutoff"), temporal.WithHeartbeatTimeout(hb)}
	started, release := make(chan struct{}, 1), make(chan struct{})
	var runs atomic.Int32
	cut := dial(proxy.Addr)
	w, err := temporal.NewWorker(cut, map[string]temporal.Child{
		"gated": {Kind: work.KindFunction, Run: func(ctx context.Context, in string) (string, error) {
			runs.Add(1)
			started <- struct{}{}
			select {
			case <-release:
				return "done while cut off: " + in, nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}},
	}, opts...)
	if err != nil || w.Start() != nil {
		t.Fatal("worker", err)
	}
	defer w.Stop()
	// Workflows also run on a Worker that stays connected.
	direct := dial(hostPort)
	wf, err := temporal.NewWorker(direct, nil, opts...)
	if err != nil || wf.Start() != nil {
		t.Fatal("workflow worker", err)
	}
	defer wf.Stop()
	eng := temporal.New(direct, opts...)
	defer eng.Close(context.Background())
	o := work.NewOwner("cut-off")
	ref, err := eng.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "gated", Kind: work.KindFunction},
		Input: "x", Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(time.Minute):
		t.Fatal("the attempt did not start")
	}
	// Heartbeats go out every third of the timeout: let one name the
	// rejoin queue, then cut.
	time.Sleep(hb) // the attempt's first heartbeats (a duration of the contract, not a synchronisation)
	proxy.Cut()
	close(release) // the child ends while its Worker is cut off
	// Past the heartbeat timeout: the server times the attempt out.
	deadline := time.Now().Add(time.Minute)
	for {
		// The owner's registry may be cached by the Worker cut off: a
		// read can find the engine unavailable meanwhile.
		st, err := eng.Status(t.Context(), o, ref.ID)
		if err != nil && !errors.Is(err, work.ErrUnavailable) {
			t.Fatal(err)
		}
		if st.State.Terminal() {
			t.Fatalf("the Work ended while its Worker was cut off: %+v", st)
		}
		d, err := direct.DescribeWorkflowExecution(t.Context(), ref.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		rejoining := false
		for _, a := range d.GetPendingActivities() {
			rejoining = rejoining || a.GetActivityType().GetName() == temporal.RejoinActivityNameForTest
		}
		if rejoining {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no Rejoin was scheduled within a minute of the cut")
		}
		time.Sleep(200 * time.Millisecond) // polling the server's view
	}
	proxy.Resume()
	st, out := settle(t, eng, o, ref.ID)
	if st.State != work.StateCompleted || out != "done while cut off: x" || st.Attempt != 1 || runs.Load() != 1 {
		t.Fatalf("after the cut: %+v %q (%d runs), want completed by attempt 1, run once", st, out, runs.Load())
	}
}

// TestStartBoundedByCaller: a launch while the server is unreachable
// answers work.ErrUnavailable once the caller's context has ended and the
// call in flight timed out (the RPC timeout), not after every retry of
// the admission.
func TestStartBoundedByCaller(t *testing.T) {
	_, hostPort, ns := serverWithAddr(t)
	proxy, err := awharness.NewProxy(hostPort)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	c, err := client.Dial(client.Options{HostPort: proxy.Addr, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const rpc = 2 * time.Second
	eng := temporal.New(c, temporal.WithTaskQueue("bounded"), temporal.WithRPCTimeout(rpc))
	defer eng.Close(context.Background())
	proxy.Cut()
	defer proxy.Resume()
	ctx, cancel := context.WithTimeout(t.Context(), rpc/2)
	defer cancel()
	began := time.Now()
	_, err = eng.Start(ctx, work.Spec{Owner: work.NewOwner("bounded"), Target: work.Target{Label: "gated", Kind: work.KindFunction},
		Input: "x", Run: func(context.Context) (string, error) { return "", nil }})
	took := time.Since(began)
	if !errors.Is(err, work.ErrUnavailable) {
		t.Fatalf("Start while the server is unreachable: %v, want unavailable", err)
	}
	// One call in flight past the caller's end, with a margin for a
	// loaded machine; the retries alone would take three RPC timeouts.
	if took > rpc+rpc/2 {
		t.Fatalf("Start took %v, want at most the RPC timeout (%v) after the caller's end", took, rpc)
	}
}
