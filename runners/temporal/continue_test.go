package temporal_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
)

// TestRegistryContinuesAsNew: an owner's registry that continues as new
// while admissions, transition records and result reads keep arriving
// (updates, some in flight as the run ends) loses none of them: every
// Work is listed completed, with its result read.
func TestRegistryContinuesAsNew(t *testing.T) {
	defer temporal.SetMaxOwnerHistory(150)()
	eng, _ := deploy(t, "can", map[string]temporal.Child{
		"echo": {Kind: work.KindFunction, Run: func(_ context.Context, in string) (string, error) { return in, nil }},
	}, nil, []temporal.Option{temporal.WithOptions(work.WithRetention(1000, 0)), temporal.WithOptions(work.WithMaxStarts(0)), temporal.WithOptions(work.WithMaxOutstanding(1000))})
	o := work.NewOwner(fmt.Sprintf("can-%d", time.Now().UnixNano()))
	const n = 48
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < n; i += 4 {
				ref, err := eng.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "echo", Kind: work.KindFunction},
					Input: fmt.Sprint(i), Run: func(context.Context) (string, error) { return "", nil }})
				if err != nil {
					errs <- fmt.Errorf("Start %d: %w (cause: %v)", i, err, errors.Unwrap(err))
					return
				}
				ids[i] = ref.ID
				st, out, err := eng.Result(context.Background(), o, ref.ID, work.MaxResultWait)
				if err != nil || st.State != work.StateCompleted || out != fmt.Sprint(i) {
					errs <- fmt.Errorf("Work %d: %s (%s) %q %v (cause: %v)", i, st.State, st.Class, out, err, errors.Unwrap(err))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	list, err := eng.List(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != n {
		t.Fatalf("%d Works listed, want %d", len(list), n)
	}
	for _, st := range list {
		if st.State != work.StateCompleted || !st.ResultRead {
			t.Fatalf("Work %s: %s, result read %v", st.Work.ID, st.State, st.ResultRead)
		}
	}
	// The registry did continue as new.
	it := server(t).GetWorkflowHistory(context.Background(), "agentwork-owner/"+o.ID(), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	first, err := it.Next()
	if err != nil {
		t.Fatal(err)
	}
	if first.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId() == "" {
		t.Fatal("the registry never continued as new")
	}
}
