package limit

import (
	"testing"
	"time"
)

func TestValue(t *testing.T) {
	for _, tc := range []struct {
		n, def, want time.Duration
		ok           bool
		detail       string
	}{
		{5, 7, 5, true, ""},
		{0, 7, 7, true, ""},
		{-1, 7, 0, false, "WithX(-1ns): a limit must not be negative"},
	} {
		v, detail, ok := Value("WithX", tc.n, tc.def)
		if v != tc.want || ok != tc.ok || detail != tc.detail {
			t.Errorf("Value(%v, %v) = %v, %q, %v; want %v, %q, %v", tc.n, tc.def, v, detail, ok, tc.want, tc.detail, tc.ok)
		}
	}
	if _, detail, ok := Value("WithN", -3, 2); ok || detail != "WithN(-3): a limit must not be negative" {
		t.Errorf("Value(-3) = %q, %v", detail, ok)
	}
}
