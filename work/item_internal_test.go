package work

import (
	"testing"
	"unsafe"
)

// TestItemSizeClass: a Work's record stays within the allocator's
// 896-byte size class (the next one is 1024 bytes: 15% more memory per
// queued Work and per retained result).
func TestItemSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(item{}); n > 896 {
		t.Fatalf("item is %d bytes, over the 896-byte size class", n)
	}
}
