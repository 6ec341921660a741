package enginetest

import (
	"testing"
	"time"
)

// NoHang runs f, a misuse probe named name, on a goroutine and fails t
// when f panics or has not returned within 10 seconds (a deadlock): the
// bound that the misuse probes of every package share.
func NoHang(t testing.TB, name string, f func()) {
	t.Helper()
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		f()
	}()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case r := <-done:
		if r != nil {
			t.Fatalf("%s panicked: %v", name, r)
		}
	case <-timer.C:
		t.Fatalf("%s did not return (deadlock)", name)
	}
}
