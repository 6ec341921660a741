package work

import (
	"container/heap"
	"slices"
)

// topK returns the k best items of m by better, best first, in
// O(n log k) time: a bounded heap whose root is the worst item kept.
func topK(m *itemTable, k int, better func(a, b *item) bool) []*item {
	h := &boundedHeap{better: better, items: make([]*item, 0, min(k, m.len()))}
	m.each(func(it *item) {
		if h.Len() < k {
			heap.Push(h, it)
		} else if better(it, h.items[0]) {
			h.items[0] = it
			heap.Fix(h, 0)
		}
	})
	slices.SortFunc(h.items, func(a, b *item) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
	return h.items
}

// boundedHeap is a heap with the worst item at the root.
type boundedHeap struct {
	items  []*item
	better func(a, b *item) bool
}

func (h *boundedHeap) Len() int           { return len(h.items) }
func (h *boundedHeap) Less(i, j int) bool { return h.better(h.items[j], h.items[i]) }
func (h *boundedHeap) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *boundedHeap) Push(x any)         { h.items = append(h.items, x.(*item)) }
func (h *boundedHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}
