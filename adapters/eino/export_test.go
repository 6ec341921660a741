package eino

import "reflect"

// SetsForTest returns how many Sets m prepared for its owner.
func SetsForTest(m *Middleware) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sets)
}

// CheckLayoutForTest is checkLayout: whether t has the ChatModelAgent
// fields the adapter reads, with their types.
func CheckLayoutForTest(t reflect.Type) error { return checkLayout(t) }
