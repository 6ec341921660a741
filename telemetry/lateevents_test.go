package telemetry_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestLateEventsStayWithTheirOwner: an event that arrives after a Work's
// execution span has ended goes on an open work-tool span of the Work's own
// owner, never on another owner's span that names the same id (that owner
// got not_found).
func TestLateEventsStayWithTheirOwner(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	obs, err := telemetry.New(telemetry.WithTracerProvider(tp), telemetry.WithoutMetrics())
	if err != nil {
		t.Fatal(err)
	}
	s := work.New(work.WithObserver(obs))
	defer s.Close(context.Background())
	a, b := work.NewOwner("a"), work.NewOwner("b")
	ctx := context.Background()
	ref, err := s.Start(ctx, work.Spec{Owner: a, Target: work.Target{Label: "x", Kind: work.KindFunction},
		Run: func(context.Context) (string, error) { return "out", nil }})
	if err != nil {
		t.Fatal(err)
	}
	// Owner b's action names a's Work and stays open while a reads the
	// result (a late result-read event).
	actx, endA := obs.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallAction, Tool: "work", Action: "result", WorkID: ref.ID, Owner: a.ID()})
	_, endB := obs.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallAction, Tool: "work", Action: "result", WorkID: ref.ID, Owner: b.ID()})
	if _, out, err := s.Result(actx, a, ref.ID, work.MaxResultWait); err != nil || out != "out" {
		t.Fatalf("result: %q %v", out, err)
	}
	endA(observe.ToolCallEnd{Outcome: "ok"})
	endB(observe.ToolCallEnd{Outcome: "not_found"})
	var gotA, gotB int
	for _, sp := range rec.Ended() {
		if sp.Name() != "execute_tool work" {
			continue
		}
		n := 0
		for _, e := range sp.Events() {
			if e.Name == "agentwork.work.result.read" {
				n++
			}
		}
		if sp.Status().Code == 0 { // a's call ended ok; b's is an error
			gotA += n
		} else {
			gotB += n
		}
	}
	if gotA != 1 || gotB != 0 {
		t.Errorf("result.read events: owner a's span %d, owner b's span %d; want 1 and 0", gotA, gotB)
	}
}
