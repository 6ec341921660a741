package work

import (
	"math/rand/v2"
	"testing"
)

// TestItemTable: random adds, removals and lookups (of ids held, ids
// removed and strings that are no id), many of the ids sharing their hash,
// agree with a map after every step, and the table holds exactly the
// map's Works.
func TestItemTable(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var tab itemTable
	ref := map[string]*item{}
	var held []*item
	// Ids sharing their first 16 characters share their hash: long runs,
	// some of them wrapping around the end of the slots.
	var prefixes []string
	for range 16 {
		prefixes = append(prefixes, newID()[:16])
	}
	prefix := prefixes[0]
	newItem := func() *item {
		id := newID()
		if r.IntN(2) == 0 {
			id = prefixes[r.IntN(len(prefixes))] + id[16:]
		}
		return &item{scopeID: "o/" + id}
	}
	check := func() {
		t.Helper()
		if tab.len() != len(ref) {
			t.Fatalf("len %d, want %d", tab.len(), len(ref))
		}
		for id, it := range ref {
			if got := tab.get(id); got != it {
				t.Fatalf("get(%s) = %p, want %p", id, got, it)
			}
		}
		seen := map[*item]bool{}
		tab.each(func(it *item) { seen[it] = true })
		if len(seen) != len(ref) {
			t.Fatalf("each visits %d, want %d", len(seen), len(ref))
		}
	}
	for range 5000 {
		switch op := r.IntN(10); {
		case op < 5 || len(held) == 0:
			it := newItem()
			tab.put(it)
			ref[it.id()] = it
			held = append(held, it)
		case op < 9:
			i := r.IntN(len(held))
			it := held[i]
			held[i] = held[len(held)-1]
			held = held[:len(held)-1]
			tab.del(it)
			delete(ref, it.id())
			if tab.get(it.id()) != nil {
				t.Fatal("a removed Work is found")
			}
			tab.del(it) // twice: nothing
		default:
			for _, id := range []string{"", "x", "0123456789abcdef", prefix + "0000000000000000", newID()} {
				if got, want := tab.get(id), ref[id]; got != want {
					t.Fatalf("get(%q) = %p, want %p", id, got, want)
				}
			}
		}
		check()
	}
	check()
	all := tab.all()
	for _, it := range all {
		tab.del(it)
	}
	if tab.len() != 0 || len(all) != len(ref) || (len(all) > 0 && tab.get(all[0].id()) != nil) {
		t.Fatal("not emptied")
	}
}
