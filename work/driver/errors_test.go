package driver_test

import (
	"errors"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// TestErrorConstructors: the driver's error functions are work's own:
// Detail keeps the code and class and DecodeError restores it, Wrap keeps
// the cause for errors.Unwrap, UpdateRefusal is work.ErrUpdateRefused of
// its reason, an unknown code does not decode, and a nil base error gives
// a usable one.
func TestErrorConstructors(t *testing.T) {
	d := driver.Detail(work.ErrLimit, "at most 3 running")
	if !errors.Is(d, work.ErrLimit) || d.Error() != work.ErrLimit.Error()+": at most 3 running" {
		t.Fatalf("Detail = %v", d)
	}
	back, ok := driver.DecodeError(d.Code, d.Error())
	if !ok || back.Error() != d.Error() || !errors.Is(back, work.ErrLimit) {
		t.Fatalf("DecodeError(Detail) = %v, %v", back, ok)
	}
	cause := errors.New("connection refused")
	w := driver.Wrap(work.ErrUnavailable, cause)
	if !errors.Is(w, work.ErrUnavailable) || errors.Unwrap(w) != cause || w.Error() != work.ErrUnavailable.Error() {
		t.Fatalf("Wrap = %v (cause %v)", w, errors.Unwrap(w))
	}
	r := driver.UpdateRefusal(observe.UpdateRefusedBytes)
	if !errors.Is(r, work.ErrUpdateRefused) || r.Class != observe.UpdateRefusedBytes {
		t.Fatalf("UpdateRefusal(bytes) = %v (class %q)", r, r.Class)
	}
	if back, ok := driver.DecodeError(r.Code, r.Error()); !ok || back.Class != observe.UpdateRefusedBytes {
		t.Fatalf("DecodeError(UpdateRefusal) = %v (class %q), %v", back, back.Class, ok)
	}
	if e, ok := driver.DecodeError("no_such_code", "x"); ok || e != nil {
		t.Fatalf("DecodeError of an unknown code = %v, %v", e, ok)
	}
	if e := driver.Detail(nil, "x"); e == nil || e.Error() != "x" {
		t.Fatalf("Detail(nil) = %v", e)
	}
	if e := driver.Wrap(nil, cause); e == nil || errors.Unwrap(e) != cause {
		t.Fatalf("Wrap(nil) = %v", e)
	}
}

// TestValidateOwner: the zero Owner, the approver role and a top-level id
// with "/" are work.ErrInvalidOwner; another Owner is valid.
func TestValidateOwner(t *testing.T) {
	for _, o := range []work.Owner{{}, work.Approver(), work.NewOwner("a/b")} {
		if err := driver.ValidateOwner(o); !errors.Is(err, work.ErrInvalidOwner) {
			t.Errorf("ValidateOwner(%q) = %v, want ErrInvalidOwner", o.ID(), err)
		}
	}
	if err := driver.ValidateOwner(work.NewOwner("o")); err != nil {
		t.Errorf("ValidateOwner(o) = %v", err)
	}
}
