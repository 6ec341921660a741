package temporal_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
)

// TestAdmissionWithoutStartIsReconciled: a coordinator dies between a
// Work's admission in its owner's registry and the start of the Work's
// workflow (here: the start and the clean-up after it never reach the
// server). The registry's record would hold the owner's only outstanding
// slot forever; once the admission grace has passed, the registry finds
// no workflow and forgets it, and the owner starts again.
func TestAdmissionWithoutStartIsReconciled(t *testing.T) {
	_, hostPort, ns := serverWithAddr(t)
	dial := func(interceptors ...grpc.UnaryClientInterceptor) client.Client {
		c, err := client.Dial(client.Options{HostPort: hostPort, Namespace: ns,
			ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(interceptors...)}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	dies := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if r, ok := req.(*workflowservice.StartWorkflowExecutionRequest); ok && r.GetWorkflowType().GetName() == temporal.WorkWorkflowName {
			return errors.New("the coordinator died before the start")
		}
		if r, ok := req.(*workflowservice.UpdateWorkflowExecutionRequest); ok && r.GetRequest().GetInput().GetName() == "forget" {
			return errors.New("the coordinator died before the clean-up")
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	opts := []temporal.Option{temporal.WithTaskQueue("admission"), temporal.WithAdmissionGrace(2 * time.Second),
		temporal.WithOptions(work.WithMaxOutstanding(1))}
	w, err := temporal.NewWorker(dial(), map[string]temporal.Child{
		"quick": {Kind: work.KindFunction, Run: func(context.Context, string) (string, error) { return "ran", nil }},
	}, opts...)
	if err != nil || w.Start() != nil {
		t.Fatal("worker", err)
	}
	defer w.Stop()
	o := work.NewOwner("admitted-not-started")
	spec := work.Spec{Owner: o, Target: work.Target{Label: "quick", Kind: work.KindFunction}, Input: "x",
		Run: func(context.Context) (string, error) { return "", nil }}
	dying := temporal.New(dial(dies), opts...)
	if _, err := dying.Start(t.Context(), spec); err == nil {
		t.Fatal("the dying coordinator's Start succeeded")
	}
	_ = dying.Close(context.Background())
	eng := temporal.New(dial(), opts...)
	defer eng.Close(context.Background())
	deadline := time.Now().Add(time.Minute)
	for {
		ref, err := eng.Start(t.Context(), spec)
		if err == nil {
			st, out := settle(t, eng, o, ref.ID)
			if st.State != work.StateCompleted || out != "ran" {
				t.Fatalf("the next Work: %+v %q", st, out)
			}
			break
		}
		if !errors.Is(err, work.ErrLimit) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the owner's outstanding limit stayed charged a minute after the admission (grace 2 s): %v", err)
		}
		time.Sleep(500 * time.Millisecond) // polling the registry's reconciliation
	}
	list, err := eng.List(t.Context(), o)
	if err != nil || len(list) != 1 {
		t.Fatalf("List: %d Works %v, want the one that ran (the unstarted admission forgotten)", len(list), err)
	}
}
