package driver

import (
	"context"
	"sync"
	"sync/atomic"
)

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

// HeldAttempt is an attempt a durable engine's Worker runs, as the
// Work's take-back finds it (Held; the runners' rejoin): its Work, its
// attempt number, its child's cancel, the take-backs so far and, once
// its child returned, its outcome. NewHeldAttempt makes one; it is safe
// for concurrent use.
type HeldAttempt[R any] struct {
	ID string
	N  int
	// Cut cancels the child, with a cause.
	Cut context.CancelCauseFunc
	// Taken counts the take-backs (Adrift.Watch's taken).
	Taken atomic.Int32
	done  chan struct{}
	out   R
}

// NewHeldAttempt returns attempt n of Work id, whose child cut cancels.
func NewHeldAttempt[R any](id string, n int, cut context.CancelCauseFunc) *HeldAttempt[R] {
	return &HeldAttempt[R]{ID: id, N: n, Cut: cut, done: make(chan struct{})}
}

// Finish records the child's outcome and closes Done; it is called once,
// when the child returned.
func (a *HeldAttempt[R]) Finish(out R) {
	a.out = out
	close(a.done)
}

// Done is closed when the child returned (Finish).
func (a *HeldAttempt[R]) Done() <-chan struct{} { return a.done }

// Outcome returns the outcome Finish recorded; it is read once Done is
// closed.
func (a *HeldAttempt[R]) Outcome() R { return a.out }
