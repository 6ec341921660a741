package work

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentwork/agentwork/work/observe"
)

// defaultNoticeBuffer is a Subscription's buffer when Subscribe is given
// none.
const defaultNoticeBuffer = 64

// Notice is a content-free notice: a Work visible to the subscribed owner
// reached a terminal state (NoticeSettled), started to await approval
// (NoticeApproval: read the request with Engine.Pending), or had an
// update accepted (NoticeUpdate: read it with Engine.Updates). It
// carries no input, output, failure text, guidance or update value.
type Notice struct {
	// Kind says what the notice reports: a settlement (the zero value), a
	// request for approval or an accepted update. A settlement notice is never dropped to make
	// room for a notice of another kind.
	Kind            NoticeKind
	WorkID          string
	Target          string        // the target label
	State           observe.State // completed, failed or cancelled (queued for NoticeApproval, the Work's state for NoticeUpdate)
	ResultAvailable bool          // completed, with its output held: read it with Result
	Seq             int           // NoticeUpdate: the update's sequence number
	Bytes           int           // NoticeUpdate: the update's encoded size
	Time            time.Time
}

// Subscription delivers one owner's completion notices. It is safe for
// concurrent use. One not made by an engine's Subscribe (zero or
// nil) is an ended Subscription: C returns a closed channel and Close does
// nothing.
type Subscription struct {
	ch      chan Notice
	dropped atomic.Uint64

	mu     sync.Mutex // guards closed and sends on ch
	closed bool

	// end is what ending the Subscription needs from the engine that
	// feeds it, set when it is made: it closes the channel (shut) and
	// makes the engine stop feeding it. It is idempotent and safe for
	// concurrent use.
	end func()
}

// C returns the channel the notices arrive on. It is closed when the
// Subscription ends.
func (sub *Subscription) C() <-chan Notice {
	if sub == nil || sub.ch == nil { // no engine made it
		return closedNotices
	}
	return sub.ch
}

// closedNotices is the channel of a Subscription no engine made: closed, so that its reader never waits.
var closedNotices = func() chan Notice {
	ch := make(chan Notice)
	close(ch)
	return ch
}()

// Dropped returns how many notices were dropped because the buffer was
// full.
func (sub *Subscription) Dropped() uint64 {
	if sub == nil {
		return 0
	}
	return sub.dropped.Load()
}

// Close ends the Subscription and closes its channel. It is idempotent.
func (sub *Subscription) Close() {
	if sub == nil || sub.ch == nil { // no engine made it: nothing to close
		return
	}
	sub.end()
}

// shut closes the channel, once: it reports whether this call closed it.
// No notice is sent once it is closed (send).
func (sub *Subscription) shut() bool {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.closed {
		return false
	}
	sub.closed = true
	close(sub.ch)
	return true
}

// send delivers n without waiting. When the buffer is full a settlement
// notice takes the place of the oldest buffered notice of another kind (a
// NoticeApproval or a NoticeUpdate), which is dropped; any other notice, or a settlement
// that finds only settlements buffered, is dropped. Every drop is counted.
func (sub *Subscription) send(n Notice) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.closed {
		return
	}
	select {
	case sub.ch <- n:
		return
	default:
	}
	if n.Kind == NoticeSettled {
		sub.evictLocked()
	}
	select {
	case sub.ch <- n:
	default:
		sub.dropped.Add(1)
	}
}

// evictLocked drops the oldest buffered notice that is not a settlement,
// if there is one, keeping the order of the others. sub.mu is held, so no
// other notice is sent meanwhile: the buffer is taken out and put back
// (the reader only ever takes notices out, so putting back never blocks).
// A reader receiving at the same moment may get a notice taken out before
// one that was behind it: notices are wake-ups, and this happens only
// when the buffer is full.
//
//go:noinline
func (sub *Subscription) evictLocked() {
	buf := make([]Notice, 0, len(sub.ch))
drain:
	for {
		select {
		case x := <-sub.ch:
			buf = append(buf, x)
		default:
			break drain
		}
	}
	evicted := false
	for _, x := range buf {
		if !evicted && x.Kind != NoticeSettled {
			evicted = true
			sub.dropped.Add(1)
			continue
		}
		sub.ch <- x
	}
}
