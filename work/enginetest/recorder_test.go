package enginetest_test

import (
	"context"
	"testing"

	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

func TestRecorder(t *testing.T) {
	var zero enginetest.Recorder // the zero value is usable
	zero.Event(context.Background(), observe.Event{})
	if len(zero.Events()) != 1 || len(zero.Calls()) != 0 {
		t.Fatalf("zero Recorder: events %v, calls %v", zero.Events(), zero.Calls())
	}
	var r enginetest.Recorder
	ctx := context.Background()
	got, end := r.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallAction, Tool: "work", Action: "list", Owner: "coord"})
	if got != ctx {
		t.Fatal("Begin changed the context")
	}
	if c := r.Calls(); len(c) != 1 || c[0].Ended {
		t.Fatalf("calls = %+v", c)
	}
	end(observe.ToolCallEnd{Outcome: "ok"})
	if c := r.Calls(); !c[0].Ended || c[0].End.Outcome != "ok" || c[0].Call.Action != "list" {
		t.Fatalf("calls = %+v", c)
	}
	exec := context.WithValue(context.Background(), execKey{}, 1)
	if r.Bind(ctx, exec, observe.Event{}) != exec {
		t.Fatal("Bind")
	}
}

// execKey is a context key of the tests' own.
type execKey struct{}
