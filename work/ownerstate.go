package work

import "github.com/agentwork/agentwork/work/observe"

type ownerState struct {
	id       string
	depth    int
	sc       *scope             // nil for a top-level owner
	items    itemTable          // visible Work, by id
	hidden   map[*item]struct{} // detached Work that is not yet terminal
	active   int                // queued + running, visible or not
	starts   int
	queue    itemList // queued Work, FIFO
	terminal itemList // visible terminal Work, oldest finished first
	// classes counts the terminal list's Works per eviction class, so
	// that eviction finds the class to evict from without a scan.
	classes [evictUnread + 1]int
	// rprev and rnext link the owner into the ready ring while inRing.
	rprev, rnext *ownerState
	inRing       bool
	launches     launchRecords
	// countsLabel is the target label of the owner's last Start and
	// counts its census entry (s.counts[countsLabel]).
	countsLabel string
	counts      *[len(observe.States)]int
}
