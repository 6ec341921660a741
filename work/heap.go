package work

// An indexed min-heap in a slice, for the system clock's deadlines of
// running Works (deadline.go) and of Result waits (waiter.go): each element
// orders itself against another and keeps its own place, so that it can
// leave the heap from anywhere. Guarded by the engine's lock.
type heapElem[T any] interface {
	heapBefore(T) bool // it is due before the other
	setHeapIdx(int32)  // 1 + its index in the heap; 0 when it is not in it
}

// heapPush adds x to h.
func heapPush[T heapElem[T]](h *[]T, x T) {
	x.setHeapIdx(int32(len(*h) + 1))
	*h = append(*h, x)
	heapUp(*h, len(*h)-1)
}

// heapRemove takes out of h its entry at i (0-based).
func heapRemove[T heapElem[T]](h *[]T, i int) {
	s := *h
	last := len(s) - 1
	if i != last {
		heapSwap(s, i, last)
	}
	var zero T
	s[last].setHeapIdx(0)
	s[last] = zero
	*h = s[:last]
	if i != last && !heapUp(*h, i) {
		heapDown(*h, i)
	}
}

func heapSwap[T heapElem[T]](s []T, i, j int) {
	s[i], s[j] = s[j], s[i]
	s[i].setHeapIdx(int32(i + 1))
	s[j].setHeapIdx(int32(j + 1))
}

// heapUp moves the entry at i up to its place and reports whether it moved.
func heapUp[T heapElem[T]](s []T, i int) bool {
	moved := false
	for i > 0 {
		p := (i - 1) / 2
		if !s[i].heapBefore(s[p]) {
			break
		}
		heapSwap(s, i, p)
		i, moved = p, true
	}
	return moved
}

func heapDown[T heapElem[T]](s []T, i int) {
	n := len(s)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && s[r].heapBefore(s[l]) {
			m = r
		}
		if !s[m].heapBefore(s[i]) {
			return
		}
		heapSwap(s, i, m)
		i = m
	}
}
