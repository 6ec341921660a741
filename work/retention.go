package work

import "github.com/agentwork/agentwork/work/internal/contract"

// evictClass is its rank in WithRetention's eviction order
// (contract.EvictionRank).
func (it *item) evictClass() int { return contract.EvictionRank(it.state(), it.read) }

// evictLocked drops the owner's terminal Work beyond the retention bounds:
// first every Work finished longer ago than the age bound, then, while more
// are kept than the count bound, the oldest finished of the first non-empty
// class: read results, then failed and cancelled Work, then unread results.
// The class scan runs only when the count bound is exceeded.
func (s *Engine) evictLocked(os *ownerState) {
	if s.lim.RetainAge > 0 {
		now := s.clock.Now()
		for f := os.terminal.front(); f != nil && now.Sub(f.finished) > s.lim.RetainAge; f = os.terminal.front() {
			s.evictItemLocked(os, f)
		}
	}
	for os.terminal.len() > s.lim.RetainTerminal {
		c := contract.EvictRead
		for os.classes[c] == 0 {
			c++
		}
		it := os.terminal.front()
		for it.evictClass() != c {
			it = it.next
		}
		s.evictItemLocked(os, it)
	}
}

// pushTerminal appends terminal it to os's terminal list.
func (os *ownerState) pushTerminal(it *item) {
	os.terminal.pushBack(it)
	os.classes[it.evictClass()]++
}

// removeTerminal takes it out of os's terminal list.
func (os *ownerState) removeTerminal(it *item) {
	os.terminal.remove(it)
	os.classes[it.evictClass()]--
}

// markRead records that it's result has been read (its eviction class
// changes when it is in its owner's terminal list).
func (it *item) markRead() {
	if it.list == &it.owner.terminal {
		it.owner.classes[contract.EvictUnread]--
		it.owner.classes[contract.EvictRead]++
	}
	it.read = true
}

func (s *Engine) evictItemLocked(os *ownerState, it *item) {
	os.removeTerminal(it)
	os.items.del(it)
	it.listed = false
	s.forgetItemLocked(it)
}

// visibleLocked returns o's state, nil when o has none, with its retention
// applied (what the owner operations read).
func (s *Engine) visibleLocked(o Owner) *ownerState {
	os := s.ownerLocked(o.id)
	if os != nil {
		s.evictLocked(os)
	}
	return os
}
