package middleware_test

import (
	"strings"
	"testing"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

// TestSendBoundsReachTheModel: the engine's guidance bounds
// reach the model as the error object with the engine's stable code, and
// the call ends rejected with that code as its class.
func TestSendBoundsReachTheModel(t *testing.T) {
	e := newEnv(t, work.WithMaxMessageBytes(64), work.WithGuidanceQueue(1, 1024))
	g := e.gate("", nil)
	s := e.prepare("coord", map[string]any{
		"research": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: g.run}),
	})
	id := launch(t, s, "research", "x")
	const secret = "CANARY-bounds"
	for _, tc := range []struct {
		message, code string
	}{
		{secret + strings.Repeat("x", 64), "message_too_large"},
		{"first", ""},
		{secret, "mailbox_full"},
	} {
		got := act(t, s, map[string]string{"action": "send", "id": id, "message": tc.message})
		if tc.code == "" {
			if !strings.Contains(got, `"outcome":"accepted"`) {
				t.Fatalf("send: %s", got)
			}
			continue
		}
		if code := errorCode(t, got); code != tc.code {
			t.Fatalf("send of %d bytes: code %q, want %q (%s)", len(tc.message), code, tc.code, got)
		}
		if strings.Contains(got, secret) {
			t.Fatalf("the error object quotes the guidance: %s", got)
		}
		calls := e.obs.Calls()
		if end := calls[len(calls)-1].End; end.Outcome != "rejected" || end.ErrorClass != tc.code {
			t.Fatalf("call end = %+v", end)
		}
	}
}
