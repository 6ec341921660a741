package driver

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestHeld(t *testing.T) {
	var h Held[*int]
	a, b := new(int), new(int)
	if _, ok := h.Get("w"); ok {
		t.Fatal("the zero Held holds nothing")
	}
	h.Put("w", a)
	h.Put("w", b)
	h.Remove("w", a) // an earlier attempt's removal leaves the later one
	if v, ok := h.Get("w"); !ok || v != b {
		t.Fatalf("Get = %v %v, want the later attempt", v, ok)
	}
	h.Remove("w", b)
	if _, ok := h.Get("w"); ok {
		t.Fatal("removed")
	}
}

// TestHeldAttempt: the outcome is read once the child returned (Done),
// from another goroutine than the one that finished it; Cut cancels the
// child with its cause.
func TestHeldAttempt(t *testing.T) {
	parent, cut := context.WithCancelCause(context.Background())
	a := NewHeldAttempt[string]("w", 2, cut)
	if a.ID != "w" || a.N != 2 || a.Taken.Load() != 0 {
		t.Fatalf("new: %s %d %d", a.ID, a.N, a.Taken.Load())
	}
	go a.Finish("done")
	select {
	case <-a.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed by Finish")
	}
	if out := a.Outcome(); out != "done" {
		t.Fatalf("Outcome = %q, want done", out)
	}
	a.Cut(ErrUnreachable)
	if !errors.Is(context.Cause(parent), ErrUnreachable) {
		t.Fatalf("cause %v", context.Cause(parent))
	}
}
