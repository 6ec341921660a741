package work_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
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
		work.UpdateRefusal(work.UpdateRefusedBytes), work.ErrLimit.Detail("at most 3 running")} {
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

// FuzzUpdateLog offers a child's updates (the idempotency key and the
// encoded value a durable runner's worker hands over) to a small log:
// never a panic; what is accepted has a key and is valid JSON, within the
// log's count and byte bounds; a refusal changes nothing; a repeat gets
// the first receipt; what After returns equals what was accepted and is a
// copy.
func FuzzUpdateLog(f *testing.F) {
	f.Add("k1", []byte(`{"step":1}`), false, "k2", []byte(`"two"`), true)
	f.Add("k1", []byte(`{"step":1}`), false, "k1", []byte(`{"step":2}`), false)
	f.Add("", []byte(`1`), false, "k", []byte(`{`), true)
	f.Add("k", []byte(`"`+strings.Repeat("x", 80)+`"`), false, "k2", []byte(`null`), false)
	f.Fuzz(func(t *testing.T, k1 string, v1 []byte, q1 bool, k2 string, v2 []byte, q2 bool) {
		policy := work.UpdatePolicy{MaxUpdates: 2, MaxBytes: 64}
		l := work.NewUpdateLog(policy)
		type offer struct {
			key      string
			value    []byte
			question bool
		}
		var accepted []offer
		now := time.Unix(0, 0)
		for _, o := range []offer{{k1, v1, q1}, {k2, v2, q2}, {k1, v1, q1}} {
			before := l.After(0)
			r, refused := l.Accept(o.key, o.value, o.question, now)
			after := l.After(0)
			if refused != "" {
				if len(after) != len(before) {
					t.Fatalf("refused %q, yet the log went from %d to %d updates", refused, len(before), len(after))
				}
				continue
			}
			if o.key == "" || !json.Valid(o.value) {
				t.Fatalf("accepted key %q value %q", o.key, o.value)
			}
			if r.Duplicate {
				if r.Seq < 1 || r.Seq > len(accepted) || accepted[r.Seq-1].key != o.key {
					t.Fatalf("duplicate receipt %+v for key %q; accepted %v", r, o.key, accepted)
				}
				continue
			}
			accepted = append(accepted, o)
			if r.Seq != len(accepted) {
				t.Fatalf("receipt seq %d; want %d", r.Seq, len(accepted))
			}
		}
		got := l.After(0)
		if len(got) != len(accepted) || len(got) > policy.MaxUpdates {
			t.Fatalf("After(0) holds %d updates; accepted %d (at most %d)", len(got), len(accepted), policy.MaxUpdates)
		}
		size := 0
		for i, u := range got {
			a := accepted[i]
			if u.Seq != i+1 || u.Key != a.key || !bytes.Equal(u.Value, a.value) || u.Question != a.question {
				t.Fatalf("update %d = %+v; accepted %q %q %v", i, u, a.key, a.value, a.question)
			}
			size += len(u.Value)
			if len(u.Value) > 0 {
				u.Value[0] ^= 0xff // a copy: the log must not change
			}
		}
		if size > policy.MaxBytes {
			t.Fatalf("the log holds %d bytes; bound %d", size, policy.MaxBytes)
		}
		for i, u := range l.After(0) {
			if !bytes.Equal(u.Value, accepted[i].value) {
				t.Fatal("changing what After returned changed the log")
			}
		}
	})
}
