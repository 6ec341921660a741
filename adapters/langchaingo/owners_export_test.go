package langchaingo

// LiveOwnersForTest returns how many owner ids the live-Kit registry holds.
func LiveOwnersForTest() int {
	liveOwners.mu.Lock()
	defer liveOwners.mu.Unlock()
	return len(liveOwners.m)
}
