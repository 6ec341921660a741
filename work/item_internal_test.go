package work

import (
	"testing"
	"unsafe"
)

// mallocHeader is what the Go allocator adds to an object over 512 bytes
// that holds pointers (Go 1.22 and later): its type, in front of it.
const mallocHeader = 8

// TestItemSizeClass: a Work's record, with its allocation header, stays
// within the allocator's 704-byte size class (the next one is 768 bytes:
// 9% more memory per queued Work and per retained result; a queued Work
// is its record, its scope id and its entry in its owner's map, and a
// waiting job that and its job state, which must stay under 1 KiB).
func TestItemSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(item{}) + mallocHeader; n > 704 {
		t.Fatalf("item is %d bytes with its header, over the 704-byte size class", n)
	}
}
