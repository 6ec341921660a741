package restate_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/work"
)

// A running Work's Status has the progress counts its child reported, as
// in-process: the attempt's state read (every four poll intervals) carries
// them to the Work's control object when they changed. The settled Work
// keeps the last ones.
func TestProgressWhileRunning(t *testing.T) {
	step := make(chan struct{})
	e := deploy(t, map[string]restate.Child{
		"count": {Kind: work.KindFunction, Run: func(ctx context.Context, _ string) (string, error) {
			work.ReportProgress(ctx, 3, 10)
			<-step
			work.ReportProgress(ctx, 7, 10)
			<-step
			return "counted", nil
		}},
	}, restate.WithPollInterval(20*time.Millisecond))
	ctx := context.Background()
	o := work.NewOwner(fmt.Sprintf("progress-%d", time.Now().UnixNano()))
	ref, err := e.Start(ctx, work.Spec{Owner: o, Target: work.Target{Label: "count", Kind: work.KindFunction}, Input: "x",
		Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	// waitDone polls Status (each a real read through Restate) until the
	// running Work shows done, within a minute.
	waitDone := func(done int64) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			st, err := e.Status(ctx, o, ref.ID)
			if err != nil {
				t.Fatal(err)
			}
			if st.Progress.Done == done && st.Progress.Total == 10 {
				if st.State != work.StateRunning {
					t.Fatalf("progress %d shown in state %s", done, st.State)
				}
				return
			}
			if st.State.Terminal() || time.Now().After(deadline) {
				t.Fatalf("Status never showed %d/10 while running: %+v", done, st)
			}
			select {
			case <-time.After(20 * time.Millisecond):
			case <-ctx.Done():
				t.Fatal(ctx.Err())
			}
		}
	}
	waitDone(3)
	step <- struct{}{}
	waitDone(7)
	close(step)
	for {
		st, out, err := e.Result(ctx, o, ref.ID, work.MaxResultWait)
		if err != nil {
			t.Fatal(err)
		}
		if st.State.Terminal() {
			if st.State != work.StateCompleted || out != "counted" || st.Progress.Done != 7 {
				t.Fatalf("settled: %+v %q", st, out)
			}
			break
		}
	}
}
