package work

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/agentwork/agentwork/work/observe"
)

func TestTopKMatchesFullSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 5, 12, 13, 100, 1000} {
		var m itemTable
		for range n {
			it := &item{seq: uint64(r.IntN(50)), st: stateIdx(r.IntN(len(observe.States))), hasOutput: r.IntN(2) == 0, read: r.IntN(2) == 0,
				scopeID: "o/" + newID()}
			m.put(it)
		}
		better := func(a, b *item) bool {
			return a.order().RowsBefore(b.order())
		}
		for _, k := range []int{1, 12, 50} {
			got := topK(&m, k, better)
			all := m.all()
			slices.SortStableFunc(all, func(a, b *item) int {
				if better(a, b) {
					return -1
				}
				if better(b, a) {
					return 1
				}
				return 0
			})
			if len(got) != min(k, n) {
				t.Fatalf("n=%d k=%d: %d items", n, k, len(got))
			}
			for i := range got {
				if better(got[i], all[i]) || better(all[i], got[i]) {
					t.Fatalf("n=%d k=%d: position %d differs", n, k, i)
				}
			}
		}
	}
}
