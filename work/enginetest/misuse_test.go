package enginetest_test

import (
	"context"
	"testing"

	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

// TestMisuseRecorder: the zero Recorder is ready (its doc comment): it
// records and returns what it saw, and Config's Options with no observer
// or clock are valid.
func TestMisuseRecorder(t *testing.T) {
	var r enginetest.Recorder
	ctx := context.Background()
	if len(r.Events()) != 0 || len(r.Calls()) != 0 {
		t.Fatal("the zero Recorder has records")
	}
	r.Event(ctx, observe.Event{Type: observe.EventQueued})
	_, end := r.Begin(ctx, observe.ToolCall{})
	end(observe.ToolCallEnd{})
	if got := r.Bind(ctx, ctx, observe.Event{}); got != ctx {
		t.Error("Bind changed exec")
	}
	if len(r.Events()) != 1 || len(r.Calls()) != 1 || !r.Calls()[0].Ended {
		t.Fatalf("events %v, calls %v", r.Events(), r.Calls())
	}
	_ = enginetest.Config{}.Options()
}
