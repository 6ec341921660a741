package temporal_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// TestStatusProgress: a running child's progress counts reach its
// coordinator's Status through the attempt's heartbeats, and a settled
// Work keeps its last counts, as in-process.
func TestStatusProgress(t *testing.T) {
	release := make(chan struct{})
	eng, queue := deploy(t, "progress", map[string]temporal.Child{
		"counting": {Kind: work.KindFunction, Run: func(ctx context.Context, _ string) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			work.ReportProgress(ctx, 2, 5)
			boundary.BeginToolCall(ex)
			<-release
			return "counted", nil
		}},
	}, []temporal.Option{temporal.WithHeartbeatTimeout(time.Second)}, nil)
	o := work.NewOwner("progress-owner-" + queue)
	ref, err := eng.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "counting", Kind: work.KindFunction},
		Input: "x", Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	want := observe.Progress{Done: 2, Total: 5, ToolCalls: 1}
	deadline := time.Now().Add(time.Minute)
	for {
		st, err := eng.Status(t.Context(), o, ref.ID)
		if err != nil {
			t.Fatal(err)
		}
		if st.Progress == want {
			break
		}
		if st.State.Terminal() || time.Now().After(deadline) {
			t.Fatalf("Status %s with progress %+v, want %+v", st.State, st.Progress, want)
		}
		time.Sleep(50 * time.Millisecond) // polling the next heartbeat
	}
	close(release)
	if st, _ := settle(t, eng, o, ref.ID); st.State != work.StateCompleted || st.Progress != want {
		t.Fatalf("settled %s with progress %+v, want its last counts %+v", st.State, st.Progress, want)
	}
}
