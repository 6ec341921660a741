package middleware_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

// The work tool's projections, waits, receipts and not_found answers are
// checked through each adapter by the conformance suite
// (middleware/adaptertest); what stays here is what no model can do.

const notFound = `{"status":"not_found"}`

func researchSet(e *env, g *gate) *middleware.Kit {
	return e.prepare("coord", map[string]any{
		"research": middleware.Backgroundable(middleware.Child{ID: "researcher-v1", Kind: work.KindAgent,
			Description: "Researches a topic.", Run: g.run}),
	})
}

// TestResultReturnsWhenCallerCancels: the wait ends with the caller's
// context, returning the status.
func TestResultReturnsWhenCallerCancels(t *testing.T) {
	e := newEnv(t)
	s := researchSet(e, e.gate("", nil))
	id := launch(t, s, "research", "task")
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan string, 1)
	go func() { got <- actCtx(t, ctx, s, map[string]string{"action": "result", "id": id}) }()
	e.clock.BlockUntil(1)
	cancel()
	if out := <-got; !strings.HasPrefix(out, `{"work":{"kind":"work.ref","id":"`+id+`"`) || !strings.Contains(out, `"state":"running"`) {
		t.Fatalf("got %s, want the running status", out)
	}
}
