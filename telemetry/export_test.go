package telemetry

// CancelEntries is how many cancel-request times o keeps (for the tests).
func CancelEntries(o *Observer) int {
	o.cancelMu.Lock()
	defer o.cancelMu.Unlock()
	return len(o.cancelAt)
}
