package eino

// SetsForTest returns how many Sets m prepared for its owner.
func SetsForTest(m *Middleware) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sets)
}
