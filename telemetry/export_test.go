package telemetry

// CancelEntries is how many cancel-request times o keeps (for the tests).
func CancelEntries(o *Observer) int {
	o.cancelMu.Lock()
	defer o.cancelMu.Unlock()
	return len(o.cancelAt)
}

// PollEntries is how many Works' tallies (poll and update counts) o keeps
// (for the tests).
func PollEntries(o *Observer) int {
	o.tallyMu.Lock()
	defer o.tallyMu.Unlock()
	return len(o.tallies)
}
