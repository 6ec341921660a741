package middleware

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseDuration parses a timeout or limit. It accepts Go's form ("500ms",
// "10s", "1m30s") and a spelled form of one or more "<number> <unit>" pairs
// ("30 seconds", "2 minutes", "1 minute 30 seconds", "1.5 hours"), with units
// ms, millisecond(s), s, sec(s), second(s), m, min(s), minute(s), h, hr(s),
// hour(s). Surrounding space is ignored and units are case-insensitive.
// Negative durations and anything else are refused with an error that
// matches ErrInvalidDuration (errors.Is). It is the parser of the work
// tool's timeout field.
func ParseDuration(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, durationError("empty string")
	}
	if d, err := time.ParseDuration(in); err == nil {
		if d < 0 {
			return 0, durationError("negative duration")
		}
		return d, nil
	}
	fields := strings.Fields(strings.ToLower(in))
	if len(fields)%2 != 0 {
		return 0, durationError("want Go form like 10s or pairs like \"30 seconds\"")
	}
	var total time.Duration
	for i := 0; i < len(fields); i += 2 {
		n, err := strconv.ParseFloat(fields[i], 64)
		if err != nil || n < 0 || n > 1e9 || n != n {
			return 0, durationError("want a non-negative number before the unit")
		}
		unit, ok := spelledUnits[fields[i+1]]
		if !ok {
			return 0, durationError("unknown unit")
		}
		// Converting an out-of-range float to an integer is
		// implementation-defined in Go (negative on amd64, saturated on
		// arm64): check the range before converting.
		f := n * float64(unit)
		if f >= maxDuration {
			return 0, durationError("duration out of range")
		}
		part := time.Duration(f)
		if total > math.MaxInt64-part {
			return 0, durationError("duration out of range")
		}
		total += part
	}
	return total, nil
}

// ErrInvalidDuration is matched (errors.Is) by every error ParseDuration
// returns.
var ErrInvalidDuration = errors.New("invalid duration")

func durationError(why string) error { return fmt.Errorf("%w: %s", ErrInvalidDuration, why) }

// maxDuration is math.MaxInt64 as a float64 (2^63): the first value a
// time.Duration cannot hold.
const maxDuration = float64(math.MaxInt64)

var spelledUnits = map[string]time.Duration{
	"ms": time.Millisecond, "millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
}
