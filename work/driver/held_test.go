package driver

import "testing"

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
