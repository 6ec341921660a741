package driver

import (
	"context"
	"sync"
	"time"

	"github.com/agentwork/agentwork/work"
)

// Life is a durable engine's client lifecycle: whether it is closed, the
// Subscriptions it polls for, and the deployment watch it registered. Its
// zero value is open with none; it is safe for concurrent use.
type Life struct {
	mu     sync.Mutex
	closed bool
	subs   map[*work.Subscription]func()
	wg     sync.WaitGroup
	polls  int      // the pollers not yet past their end (wg counts them to their last step)
	watch  Watching // the engine's deployment watch, ended by Close
}

// Closed reports whether Close has begun.
func (l *Life) Closed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// Close marks l closed, ends the watch and every Subscription, and waits
// for their pollers while ctx allows (ctx's error if it does not; nil
// with no poller left, whatever ctx).
func (l *Life) Close(ctx context.Context) error {
	l.mu.Lock()
	l.closed = true
	subs := l.subs
	l.subs = nil
	idle := l.polls == 0
	l.mu.Unlock()
	l.watch.Stop()
	for _, closeFn := range subs {
		closeFn()
	}
	if idle {
		return nil
	}
	done := make(chan struct{})
	go func() {
		l.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// settleTries bounds the polls a Work's settlement notice waits for its
// update notices (their details unreadable): after them it goes out
// anyway, the updates' notices then lost.
const settleTries = 3

// Reader reads an owner's registry: the records the owner has not
// detached, with no age bound applied (not Current's view).
type Reader func(ctx context.Context) ([]Record, error)

// UpdateNotices publishes the notices of r's updates after the seen
// first ones, in order, and returns how many are notified now (seen when
// none could be read). It reads the updates' metadata (UpdateMeta), never
// their values (Portable's: a Store's ReadUpdateMeta, then
// publishUpdates).
type UpdateNotices func(ctx context.Context, r Record, seen int, publish func(work.Notice)) int

// Subscribe returns a Subscription to o's notices, as
// work.Engine.Subscribe, from reading o's registry (read) every
// interval: a completion notice once per Work that settles after the
// Subscription began, an approval notice (work.NoticeApproval) once per
// Work that awaits approval after it began, and the update notices of
// each accepted update (updates) before its Work's settlement notice (a
// settlement whose updates could not be read waits for them, at most
// settleTries polls).
// read applies no age bound (Reader): a Work that settles and passes the
// age bound (work.WithRetention) between two reads still has its notice,
// as in-process, where the notice goes out as the Work settles.
// The poller outlives ctx (which bounds the first read): it ends with the
// Subscription, whose stop also interrupts a read in progress, or with
// Close. After Close it returns work.ErrClosed; with read nil,
// work.ErrUnavailable (nothing to read the registry with).
func (l *Life) Subscribe(ctx context.Context, o work.Owner, buffer int, interval time.Duration, read Reader, updates UpdateNotices) (*work.Subscription, error) {
	if err := ValidateOwner(o); err != nil {
		return nil, err
	}
	if l.Closed() {
		return nil, work.ErrClosed
	}
	if read == nil {
		return nil, Detail(work.ErrUnavailable, "no registry reader")
	}
	recs, err := read(ctx)
	if err != nil {
		return nil, err
	}
	seen, asked := map[string]bool{}, map[string]bool{}
	updated := map[string]int{} // the last update of each Work notified
	held := map[string]int{}    // polls a settlement waited for its updates' notices
	for _, r := range recs {
		updated[r.ID] = r.Updates
		if r.State.Terminal() {
			seen[r.ID] = true
		}
		if r.Approval {
			asked[r.ID] = true
		}
	}
	pctx, stop := context.WithCancel(context.Background())
	sub, publish, closeFn := newSubscription(buffer, stop)
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		stop()
		return nil, work.ErrClosed
	}
	if l.subs == nil {
		l.subs = map[*work.Subscription]func(){}
	}
	l.subs[sub] = closeFn
	l.wg.Add(1)
	l.polls++
	l.mu.Unlock()
	go func() {
		defer l.wg.Done()
		defer func() {
			l.mu.Lock()
			delete(l.subs, sub)
			l.polls--
			l.mu.Unlock()
		}()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-pctx.Done():
				return
			case <-tick.C:
			}
			recs, err := read(pctx)
			if err != nil || pctx.Err() != nil {
				continue
			}
			for _, r := range recs {
				if r.Approval && !r.State.Terminal() && !asked[r.ID] {
					asked[r.ID] = true
					publish(work.Notice{Kind: work.NoticeApproval, WorkID: r.ID, Target: r.Label, State: r.State, Time: r.RequestedAt()})
				}
				if r.Updates > updated[r.ID] {
					updated[r.ID] = updates(pctx, r, updated[r.ID], publish)
				}
				if r.State.Terminal() && !seen[r.ID] {
					if r.Updates > updated[r.ID] && held[r.ID] < settleTries {
						// Its update notices come first: the settlement
						// waits for a poll that reads them, a bounded
						// number of polls.
						held[r.ID]++
						continue
					}
					seen[r.ID] = true
					delete(held, r.ID)
					publish(work.Notice{WorkID: r.ID, Target: r.Label, State: r.State,
						ResultAvailable: r.HasResult, Time: r.Finished})
				}
			}
		}
	}()
	return sub, nil
}
