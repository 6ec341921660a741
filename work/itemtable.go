package work

// itemTable is an owner's visible Work by id (ownerState.items), guarded
// by the engine's lock: an open-addressing hash table with linear
// probing, whose deletion shifts the entries after the removed one back
// (no tombstones). Its slots keep each entry's hash beside its item, so a
// probe reads an item's id only when the hashes match. Ids are random, so
// a hash of their first 16 characters spreads them; a lookup of a string
// that is not an id finds nothing. A Work is added once, at Start, looked
// up by each owner operation and removed as it is detached or evicted: a
// map keyed by the id string did the three at about three times the cost.
type itemTable struct {
	slots []itemSlot // a power of two long, at most half full
	n     int
}

type itemSlot struct {
	h  uint64
	it *item // nil: a free slot
}

// idHash hashes id by its first 16 characters (an id has 32); ids are
// random, and a shorter string is no id.
func idHash(id string) uint64 {
	if len(id) < 16 {
		return uint64(len(id))
	}
	_ = id[15]
	a := uint64(id[0]) | uint64(id[1])<<8 | uint64(id[2])<<16 | uint64(id[3])<<24 |
		uint64(id[4])<<32 | uint64(id[5])<<40 | uint64(id[6])<<48 | uint64(id[7])<<56
	b := uint64(id[8]) | uint64(id[9])<<8 | uint64(id[10])<<16 | uint64(id[11])<<24 |
		uint64(id[12])<<32 | uint64(id[13])<<40 | uint64(id[14])<<48 | uint64(id[15])<<56
	h := (a ^ b*0x9e3779b97f4a7c15) * 0xbf58476d1ce4e5b9
	return h ^ h>>31
}

// len returns how many Works the table holds.
func (t *itemTable) len() int { return t.n }

// get returns the Work with id, nil when there is none.
func (t *itemTable) get(id string) *item {
	if t.n == 0 {
		return nil
	}
	h := idHash(id)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.it == nil {
			return nil
		}
		if s.h == h && s.it.id() == id {
			return s.it
		}
	}
}

// put adds it, whose id the table does not hold.
func (t *itemTable) put(it *item) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	t.insert(idHash(it.id()), it)
	t.n++
}

func (t *itemTable) insert(h uint64, it *item) {
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for t.slots[i].it != nil {
		i = (i + 1) & mask
	}
	t.slots[i] = itemSlot{h, it}
}

func (t *itemTable) grow() {
	old := t.slots
	t.slots = make([]itemSlot, max(8, 2*len(old)))
	for _, s := range old {
		if s.it != nil {
			t.insert(s.h, s.it)
		}
	}
}

// del removes it, if the table holds it.
func (t *itemTable) del(it *item) {
	if t.n == 0 {
		return
	}
	mask := len(t.slots) - 1
	i := int(idHash(it.id())) & mask
	for t.slots[i].it != it {
		if t.slots[i].it == nil {
			return
		}
		i = (i + 1) & mask
	}
	// Shift back each later entry of the run that may sit at i: one whose
	// home slot is not cyclically within (i, j].
	for j := (i + 1) & mask; t.slots[j].it != nil; j = (j + 1) & mask {
		k := int(t.slots[j].h) & mask
		if (i <= j && (k <= i || k > j)) || (i > j && k <= i && k > j) {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = itemSlot{}
	t.n--
}

// all returns the Works the table holds, in no order.
func (t *itemTable) all() []*item {
	its := make([]*item, 0, t.n)
	for _, s := range t.slots {
		if s.it != nil {
			its = append(its, s.it)
		}
	}
	return its
}

// each calls f for each Work the table holds, in no order; f must not add
// or remove any.
func (t *itemTable) each(f func(*item)) {
	for _, s := range t.slots {
		if s.it != nil {
			f(s.it)
		}
	}
}
