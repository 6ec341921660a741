package temporal_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
)

// TestUpdateOnClosedWork: an update that reaches a Work workflow after it
// closed (a cancel or send racing the Work's completion, after the owner's
// registry said it was running) is the closed-workflow case, never
// not_found; Cancel then reports the terminal state, not accepted.
func TestUpdateOnClosedWork(t *testing.T) {
	c := server(t)
	opts := []temporal.Option{temporal.WithTaskQueue("closed"), temporal.WithHeartbeatTimeout(2 * time.Second)}
	w, err := temporal.NewWorker(c, map[string]temporal.Child{
		"echo": {Kind: work.KindFunction, Run: func(_ context.Context, in string) (string, error) { return in, nil }},
	}, opts...)
	if err != nil || w.Start() != nil {
		t.Fatal("worker", err)
	}
	defer w.Stop()
	e := temporal.New(c, opts...)
	defer e.Close(context.Background())
	o := work.NewOwner("closed")
	ref, err := e.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "echo", Kind: work.KindFunction},
		Input: "x", Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.GetWorkflow(context.Background(), ref.ID, "").Get(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := temporal.CancelClosed(c, opts, o, ref.ID); !errors.Is(err, temporal.ErrWorkflowClosed) {
		t.Fatalf("cancel update on a closed Work workflow: %v, want the closed-workflow error", err)
	}
	if r, err := e.Cancel(t.Context(), o, ref.ID); err != nil || r.Accepted || r.State != work.StateCompleted {
		t.Fatalf("Cancel(completed) = %+v, %v", r, err)
	}
}
