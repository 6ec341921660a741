package middleware_test

import (
	"testing"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

// TestActionWorkIDOnlyWhenItExists: a work-tool action hands the observer
// (and so telemetry) the id it names only when that Work exists for the
// Kit's owner at the call; an unknown, foreign or detached id is the
// model's string and stays out.
func TestActionWorkIDOnlyWhenItExists(t *testing.T) {
	e := newEnv(t)
	g := e.gate("", nil)
	g.cooperative = true
	entries := map[string]any{"research": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: g.run})}
	mine := e.prepare("coord", entries)
	other := e.prepare("other", entries)
	id := launch(t, mine, "research", "x")
	foreign := launch(t, other, "research", "x")
	const unknown = "0123456789abcdef0123456789abcdef"
	lastWorkID := func() string {
		calls := e.obs.Calls()
		return calls[len(calls)-1].Call.WorkID
	}
	for _, tc := range []struct {
		name string
		in   map[string]string
		want string
	}{
		{"status of own work", map[string]string{"action": "status", "id": id}, id},
		{"result of own work", map[string]string{"action": "result", "id": id, "timeout": "0s"}, id},
		{"send to own work", map[string]string{"action": "send", "id": id, "message": "go on"}, id},
		{"list", map[string]string{"action": "list"}, ""},
		{"status of an unknown id", map[string]string{"action": "status", "id": unknown}, ""},
		{"result of an unknown id", map[string]string{"action": "result", "id": unknown, "timeout": "0s"}, ""},
		{"cancel of an unknown id", map[string]string{"action": "cancel", "id": unknown}, ""},
		{"detach of an unknown id", map[string]string{"action": "detach", "id": unknown}, ""},
		{"send to an unknown id", map[string]string{"action": "send", "id": unknown, "message": "go on"}, ""},
		{"status of a foreign id", map[string]string{"action": "status", "id": foreign}, ""},
		{"result of a foreign id", map[string]string{"action": "result", "id": foreign, "timeout": "0s"}, ""},
		{"cancel of a foreign id", map[string]string{"action": "cancel", "id": foreign}, ""},
		{"detach of a foreign id", map[string]string{"action": "detach", "id": foreign}, ""},
		{"send to a foreign id", map[string]string{"action": "send", "id": foreign, "message": "go on"}, ""},
		{"status of a malformed id", map[string]string{"action": "status", "id": "not-an-id"}, ""},
		{"invalid input naming own work", map[string]string{"action": "send", "id": id, "message": " "}, ""},
		{"detach of own work", map[string]string{"action": "detach", "id": id}, id},
		{"status of own work after detach", map[string]string{"action": "status", "id": id}, ""},
	} {
		act(t, mine, tc.in)
		if got := lastWorkID(); got != tc.want {
			t.Errorf("%s: the observer got work id %q, want %q", tc.name, got, tc.want)
		}
	}
}
