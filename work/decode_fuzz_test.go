package work_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// FuzzDecodeError decodes arbitrary codes and messages, as a durable
// runner does with what its service hands back: never a panic; an unknown
// code is refused; a known one decodes to an error of that code whose
// message is the one given (a message this package makes) or the code's
// base message, and never holds more than the package reads (1 KiB) of it.
// Every error the package declares round-trips.
func FuzzDecodeError(f *testing.F) {
	for _, e := range []*work.Error{work.ErrNotFound, work.ErrInvalidSpec, work.ErrLimit, work.ErrChildFailed,
		work.ErrUnavailable, work.ErrUpdateRefused, work.ErrUnanswered, work.ErrBudgetExhausted, work.ApprovalCallRefusal,
		work.UpdateRefusal(observe.UpdateRefusedBytes), work.ErrLimit.Detail("at most 3 running")} {
		f.Add(e.Code, e.Error())
		d, ok := work.DecodeError(e.Code, e.Error())
		if !ok || d.Code != e.Code || d.Error() != e.Error() || d.Class != e.Class {
			f.Fatalf("DecodeError(%q, %q) = %v (class %q), %v; want the same error back", e.Code, e.Error(), d, d.Class, ok)
		}
	}
	f.Add("limit_exceeded", "limit exceeded: "+strings.Repeat("x", work.MaxErrorMessageForTest))
	f.Add("nope", "nope")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, code, message string) {
		d, ok := work.DecodeError(code, message)
		if !ok {
			if d != nil {
				t.Fatalf("refused, yet returned %v", d)
			}
			return
		}
		if d == nil || d.Code != code {
			t.Fatalf("DecodeError(%q, ...) = %v; want an error of code %q", code, d, code)
		}
		base, _ := work.DecodeError(code, "")
		if got := d.Error(); got != message && got != base.Error() {
			t.Fatalf("DecodeError(%q, %q) says %q: neither the message given nor the code's base message", code, message, got)
		}
		if len(d.Error()) > work.MaxErrorMessageForTest {
			t.Fatalf("decoded message of %d bytes; at most %d are read", len(d.Error()), work.MaxErrorMessageForTest)
		}
		if !errors.Is(d, base) {
			t.Fatalf("errors.Is(decoded, base of %q) is false", code)
		}
	})
}
