package observe_test

import (
	"context"
	"testing"

	"github.com/agentwork/agentwork/work/observe"
)

// TestMisuseObserve: the zero values of the observer seam's types and its
// functions given nil answer without a panic: an unknown State is not
// valid, not terminal and has no index; nothing is traced or known on a
// plain context.
func TestMisuseObserve(t *testing.T) {
	ctx := context.Background()
	var s observe.State
	if s.Valid() || s.Terminal() {
		t.Errorf("zero State: Valid %v, Terminal %v", s.Valid(), s.Terminal())
	}
	if i := s.Index(); i != -1 {
		t.Errorf("zero State's Index = %d, want -1", i)
	}
	if k := observe.Kind(0).String(); k == "" {
		t.Error("zero Kind's String is empty")
	}
	observe.SortLive(nil)
	if observe.ToolCallTraced(ctx) {
		t.Error("a plain context is traced")
	}
	if _, ok := observe.TargetInfoFrom(ctx); ok {
		t.Error("a plain context has target info")
	}
	var nop observe.NopObserver
	c2, end := nop.Begin(ctx, observe.ToolCall{})
	if c2 != ctx || end == nil {
		t.Error("NopObserver.Begin changed ctx or returned no end")
	}
	end(observe.ToolCallEnd{})
	if got := nop.Bind(ctx, ctx, observe.Event{}); got != ctx {
		t.Error("NopObserver.Bind changed exec")
	}
	var u observe.Usage
	if u.Tokens() != 0 {
		t.Error("zero Usage has tokens")
	}
}
