package temporal_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
)

// TestTelemetryQueryOfClosedWork: a query of a Work's closed workflow
// (Send's idempotent replay of a guidance command after the Work ended)
// makes a worker replay the whole history; that replay exports no second
// invoke_agent span for the Work.
func TestTelemetryQueryOfClosedWork(t *testing.T) {
	tel := newObserved(t, nil)
	spans := tel.spans
	eng, queue := deploy(t, "query-closed", map[string]temporal.Child{
		"ok": {Kind: work.KindAgent, Run: func(context.Context, string) (string, error) { return "done", nil }},
	}, []temporal.Option{temporal.WithOptions(work.WithObserver(tel.obs))}, nil)
	o := work.NewOwner("query-owner-" + queue)
	ref, err := eng.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "ok", Kind: work.KindAgent},
		Input: "x", Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := settle(t, eng, o, ref.ID); st.State != work.StateCompleted {
		t.Fatalf("ended %s", st.State)
	}
	if n := len(invokeSpans(spans.Ended(), ref.ID)); n != 1 {
		t.Fatalf("%d invoke_agent spans before the query, want 1", n)
	}
	for i := range 2 {
		if _, err := eng.Send(t.Context(), o, ref.ID, "call-"+strconv.Itoa(i), "late"); !errors.Is(err, work.ErrTerminal) {
			t.Fatalf("send to the ended Work: %v, want terminal", err)
		}
	}
	if n := len(invokeSpans(spans.Ended(), ref.ID)); n != 1 {
		t.Errorf("%d invoke_agent spans after queries of the closed workflow, want 1", n)
	}
}
