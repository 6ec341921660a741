// Package limit is the one rule of a limit option's value, which work's
// limit options and the durable runners' options of the same kind
// (through work/driver) share: a positive value is the value, 0 the
// option's documented default, a negative value invalid.
package limit

import (
	"fmt"
	"time"
)

// Value returns what option's value n sets: n when positive, def when 0.
// For a negative n it returns ok false and the detail of the option's
// invalid-limit error, which names the option and its value; the caller
// keeps what it had.
func Value[T int | time.Duration](option string, n, def T) (v T, detail string, ok bool) {
	switch {
	case n > 0:
		return n, "", true
	case n == 0:
		return def, "", true
	default:
		return 0, fmt.Sprintf("%s(%v): a limit must not be negative", option, n), false
	}
}
