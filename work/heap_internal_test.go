package work

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestHeap: random pushes and removals from anywhere keep the heap
// ordered and every element's index right; elements leave in order.
func TestHeap(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var h []*waiter
	check := func() {
		t.Helper()
		for i, w := range h {
			if int(w.idx) != i+1 {
				t.Fatalf("element %d has index %d", i, w.idx)
			}
			if i > 0 && h[i].heapBefore(h[(i-1)/2]) {
				t.Fatalf("element %d is due before its parent", i)
			}
		}
	}
	for range 5000 {
		if len(h) == 0 || r.IntN(3) > 0 {
			heapPush(&h, &waiter{at: time.Duration(r.IntN(100))})
		} else {
			w := h[r.IntN(len(h))]
			heapRemove(&h, int(w.idx)-1)
			if w.idx != 0 {
				t.Fatal("a removed element keeps its index")
			}
		}
		check()
	}
	var out []time.Duration
	for len(h) > 0 {
		out = append(out, h[0].at)
		heapRemove(&h, 0)
		check()
	}
	if !slices.IsSorted(out) {
		t.Fatal("elements left out of order")
	}
}
