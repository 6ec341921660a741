package middleware_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

// The work tool's projections, waits, receipts and not_found answers are
// checked through each adapter by the conformance suite
// (middleware/adaptertest); what stays here is what no model can do.

const notFound = `{"status":"not_found"}`

func researchSet(e *env, g *gate) *middleware.Set {
	return e.prepare("coord", map[string]any{
		"research": middleware.Backgroundable(middleware.Child{ID: "researcher-v1", Kind: work.KindAgent,
			Description: "Researches a topic.", Run: g.run}),
	})
}

// statusJSON is the golden WorkStatus of researchSet's child, with <ID>
// for its id; negative durations leave a timestamp out.
func statusJSON(state string, created, started, finished time.Duration, available bool) string {
	s := `{"work":{"kind":"work.ref","id":"<ID>","targetId":"researcher-v1","guarantees":{"execution":"process-local","rejoin":"process-local"}},` +
		`"targetLabel":"research","state":"` + state + `","attachment":"attached","attempt":1,"createdAt":"` + iso(created) + `"`
	if started >= 0 {
		s += `,"startedAt":"` + iso(started) + `"`
	}
	if finished >= 0 {
		s += `,"finishedAt":"` + iso(finished) + `"`
	}
	return s + fmt.Sprintf(`,"resultAvailable":%t}`, available)
}

const none = -1

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
	if out := subst(<-got, map[string]string{id: "<ID>"}); out != statusJSON("running", 0, 0, none, false) {
		t.Fatalf("got %s", out)
	}
}
