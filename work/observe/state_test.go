package observe

import (
	"testing"
)

// TestStateIndex: Index finds every state at its place in States and
// nothing else (it goes by the names' lengths first).
func TestStateIndex(t *testing.T) {
	for i, s := range States {
		if got := s.Index(); got != i {
			t.Errorf("%q.Index() = %d, want %d", s, got, i)
		}
	}
	for _, s := range []State{"", "queue", "Queued", "failed ", "cancelle", "cancel_requested", "completed!"} {
		if got := s.Index(); got != -1 {
			t.Errorf("%q.Index() = %d, want -1", s, got)
		}
	}
}
