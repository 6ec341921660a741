package work

import "testing"

// TestStateIndex: index finds every state at its place in States and
// nothing else (it goes by the names' lengths first).
func TestStateIndex(t *testing.T) {
	for i, s := range States {
		if got := s.index(); got != i {
			t.Errorf("%q.index() = %d, want %d", s, got, i)
		}
	}
	for _, s := range []State{"", "queue", "Queued", "failed ", "cancelle", "cancel_requested", "completed!"} {
		if got := s.index(); got != -1 {
			t.Errorf("%q.index() = %d, want -1", s, got)
		}
	}
}
