package work

import "time"

// Clock is the in-process engine's source of time: every timestamp, elapsed
// time, result wait and maximum-duration deadline goes through it, so tests
// can drive time by hand. Implementations must be safe for concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f on its own goroutine once d has passed, unless stop
	// is called first; stop reports whether it prevented the call.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// systemClock is the real clock, the default.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}
