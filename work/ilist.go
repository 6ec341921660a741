package work

// itemList is an intrusive FIFO of Works: an owner's queue, the
// engine's running Work or an owner's list of visible terminal Work. A
// Work is in at most one list at a time (it leaves the queue to run or to
// be cancelled, and the running list to be terminal), so one pair of links
// in the item serves all three, and pushing allocates nothing.
type itemList struct {
	head, tail *item
	n          int
}

func (l *itemList) pushBack(it *item) {
	it.prev, it.next, it.list = l.tail, nil, l
	if l.tail != nil {
		l.tail.next = it
	} else {
		l.head = it
	}
	l.tail = it
	l.n++
}

// remove takes it out of l, which must hold it.
func (l *itemList) remove(it *item) {
	if it.prev != nil {
		it.prev.next = it.next
	} else {
		l.head = it.next
	}
	if it.next != nil {
		it.next.prev = it.prev
	} else {
		l.tail = it.prev
	}
	it.prev, it.next, it.list = nil, nil, nil
	l.n--
}

func (l *itemList) front() *item { return l.head }
func (l *itemList) len() int     { return l.n }

// ownerRing is the intrusive round-robin ring of owners with queued Work.
type ownerRing struct {
	head, tail *ownerState
	n          int
}

func (r *ownerRing) pushBack(os *ownerState) {
	os.rprev, os.rnext, os.inRing = r.tail, nil, true
	if r.tail != nil {
		r.tail.rnext = os
	} else {
		r.head = os
	}
	r.tail = os
	r.n++
}

// remove takes os out of r, which must hold it.
func (r *ownerRing) remove(os *ownerState) {
	if os.rprev != nil {
		os.rprev.rnext = os.rnext
	} else {
		r.head = os.rnext
	}
	if os.rnext != nil {
		os.rnext.rprev = os.rprev
	} else {
		r.tail = os.rprev
	}
	os.rprev, os.rnext, os.inRing = nil, nil, false
	r.n--
}

func (r *ownerRing) front() *ownerState { return r.head }
func (r *ownerRing) len() int           { return r.n }
