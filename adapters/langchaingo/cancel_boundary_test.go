package langchaingo_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tmc/langchaingo/llms"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/work/driver"
)

// TestCancelAtGuidanceStopsRequest: a cancel that reaches the child while
// its model boundary drains guidance (as a durable engine's heartbeat at
// the boundary brings it) stops that boundary's request: the inner model
// is not called and the request fails with the context's error.
func TestCancelAtGuidanceStopsRequest(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	drained := 0
	ctx = driver.WithRemote(ctx, driver.Remote{WorkID: "0123456789abcdef0123456789abcdef", OwnerID: "coordinator",
		Guidance: func() []string { drained++; cancel(); return nil }})
	inner := &spy{inner: scripted.New(scripted.Text("sent after the cancel"))}
	_, err := lc.WrapModel(inner).GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "go")})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("GenerateContent = %v, want context.Canceled", err)
	}
	if drained != 1 || inner.calls() != 0 {
		t.Fatalf("guidance drained %d times, inner model called %d times; want 1 and 0", drained, inner.calls())
	}
}
