package updatelog_test

import (
	"testing"
	"time"

	"github.com/agentwork/agentwork/work/internal/updatelog"
	"github.com/agentwork/agentwork/work/observe"
)

// TestRefusalReasonsAreObserves: the refusal reasons a Log answers are observe's
// UpdateRefused* constants (a reason "" would read as accepted).
func TestRefusalReasonsAreObserves(t *testing.T) {
	var nilLog *updatelog.Log
	l := updatelog.Make(updatelog.Policy{MaxUpdates: 1, MaxBytes: 4})
	now := time.Unix(0, 0)
	_, notDeclared := nilLog.Accept("k", []byte(`1`), false, now)
	_, invalid := l.Accept("", []byte(`1`), false, now)
	l.Accept("a", []byte(`1`), false, now)
	_, conflict := l.Accept("a", []byte(`2`), false, now)
	_, count := l.Accept("b", []byte(`1`), false, now)
	big := updatelog.Make(updatelog.Policy{MaxUpdates: 5, MaxBytes: 1})
	_, tooBig := big.Accept("c", []byte(`12`), false, now)
	big.End()
	_, ending := big.Accept("d", []byte(`1`), false, now)
	for _, c := range []struct{ got, want string }{
		{notDeclared, observe.UpdateRefusedNotDeclared}, {invalid, observe.UpdateRefusedInvalid},
		{conflict, observe.UpdateRefusedConflict}, {count, observe.UpdateRefusedCount},
		{tooBig, observe.UpdateRefusedBytes}, {ending, observe.UpdateRefusedEnding},
	} {
		if c.got != c.want || c.got == "" {
			t.Errorf("refusal %q, want %q", c.got, c.want)
		}
	}
}
