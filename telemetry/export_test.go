package telemetry

// CancelEntries is how many cancel-request times o keeps (for the tests).
func CancelEntries(o *Observer) int {
	o.cancelMu.Lock()
	defer o.cancelMu.Unlock()
	return len(o.cancelAt)
}

// PollEntries is how many Works' poll counts o keeps (for the tests).
func PollEntries(o *Observer) int {
	o.pollMu.Lock()
	defer o.pollMu.Unlock()
	return len(o.polls)
}
