package work

import (
	"crypto/sha256"
	"time"
)

// mailbox is a Work's guidance queue and command records, allocated on the
// first Send. It is guarded by the engine's lock.
type mailbox struct {
	queued []string // accepted, undelivered guidance, in order
	bytes  int      // total size of queued
	cursor int      // guidance accepted so far
	// records maps the digest of a command id to its record; order holds
	// the same digests, oldest first, as a ring of at most maxCommands
	// starting at next once it is full.
	records map[[sha256.Size]byte]record
	order   [][sha256.Size]byte
	next    int
}

// record is what an accepted command leaves behind: digests and the
// receipt's position and time, never the text or the command id.
type record struct {
	digest [sha256.Size]byte // SHA-256 of the message
	cursor int
	at     time.Time
}

// remember records an accepted command, dropping the oldest record when
// max are kept.
func (mb *mailbox) remember(key [sha256.Size]byte, r record, max int) {
	if mb.records == nil {
		mb.records = make(map[[sha256.Size]byte]record)
	}
	if len(mb.order) < max {
		mb.order = append(mb.order, key)
	} else {
		delete(mb.records, mb.order[mb.next])
		mb.order[mb.next] = key
		mb.next = (mb.next + 1) % max
	}
	mb.records[key] = r
}

// guidance is work/boundary's Guidance (which documents it).
func (e *Execution) guidance() []string {
	if e == nil {
		return nil
	}
	if e.rt == nil {
		return nil
	}
	return e.rt.guidance()
}
