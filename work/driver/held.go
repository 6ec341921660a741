package driver

import "sync"

// Held is what a durable engine's Worker keeps of the attempts it runs,
// by Work id, so that the Work can take an attempt back after the
// service lost track of it (a server restart, a network cut): the
// runners' rejoin. The zero value is empty; it is safe for concurrent
// use.
type Held[T comparable] struct {
	mu sync.Mutex
	m  map[string]T
}

// Put keeps v for Work id (replacing what was kept).
func (h *Held[T]) Put(id string, v T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]T{}
	}
	h.m[id] = v
}

// Get returns what is kept for Work id.
func (h *Held[T]) Get(id string) (T, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.m[id]
	return v, ok
}

// Remove drops what is kept for Work id if it is still v (a later
// attempt's is left).
func (h *Held[T]) Remove(id string, v T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if cur, ok := h.m[id]; ok && cur == v {
		delete(h.m, id)
	}
}
