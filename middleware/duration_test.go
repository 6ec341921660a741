package middleware_test

import (
	"errors"
	"testing"
	"time"

	"github.com/agentwork/agentwork/middleware"
)

func TestParseDuration(t *testing.T) {
	ok := []struct {
		in   string
		want time.Duration
	}{
		{"500ms", 500 * time.Millisecond},
		{"10s", 10 * time.Second},
		{"1m30s", 90 * time.Second},
		{"1h", time.Hour},
		{"0", 0},
		{"0s", 0},
		{"1.5s", 1500 * time.Millisecond},
		{"  10s  ", 10 * time.Second},
		{"30 seconds", 30 * time.Second},
		{"2 minutes", 2 * time.Minute},
		{"1 minute", time.Minute},
		{"1 minute 30 seconds", 90 * time.Second},
		{"1 second", time.Second},
		{"1.5 hours", 90 * time.Minute},
		{"250 milliseconds", 250 * time.Millisecond},
		{"5 SECONDS", 5 * time.Second},
		{"2 mins", 2 * time.Minute},
		{"3 secs", 3 * time.Second},
		{"1 hr 1 min", time.Hour + time.Minute},
		{"10 s", 10 * time.Second},
		{"0 seconds", 0},
		{"2  minutes\t5 seconds", 2*time.Minute + 5*time.Second},
	}
	for _, tt := range ok {
		t.Run(tt.in, func(t *testing.T) {
			got, err := middleware.ParseDuration(tt.in)
			if err != nil || got != tt.want {
				t.Fatalf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
	bad := []string{
		"", "   ", "soon", "10", "10 parsecs", "seconds", "30 seconds 5", "-5s", "-1 seconds", "-0.5 minutes",
		"NaN seconds", "Inf seconds", "1e10 hours", "3000000 hours", "9223372036 seconds", "1 minute and 30 seconds",
		"30seconds", "1m 30s", "10 s s", "5 days", "+-5 s", "1h-1m",
	}
	for _, in := range bad {
		t.Run("bad/"+in, func(t *testing.T) {
			d, err := middleware.ParseDuration(in)
			if err == nil {
				t.Fatalf("ParseDuration(%q) = %v, want an error", in, d)
			}
			if !errors.Is(err, middleware.ErrInvalidDuration) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"500ms", "10s", "1m30s", "30 seconds", "2 minutes", "1 minute 30 seconds",
		"-5s", "1e300 hours", "0x1p4 s", "9223372036s", "2562047h", "2562048h", "1.5 hours", "", " ", "µs", "1µs"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := middleware.ParseDuration(s)
		if err != nil {
			if !errors.Is(err, middleware.ErrInvalidDuration) {
				t.Fatalf("untyped error %v", err)
			}
			if d != 0 {
				t.Fatalf("error with a duration %v", d)
			}
		} else if d < 0 {
			t.Fatalf("ParseDuration(%q) = %v, negative", s, d)
		}
		if gd, gerr := time.ParseDuration(s); gerr == nil {
			if gd < 0 {
				if err == nil {
					t.Fatalf("ParseDuration(%q) accepted a negative Go duration", s)
				}
			} else if err != nil || d != gd {
				t.Fatalf("ParseDuration(%q) = %v, %v; time.ParseDuration = %v", s, d, err, gd)
			}
		}
	})
}
