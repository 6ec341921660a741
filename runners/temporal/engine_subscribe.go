package temporal

import (
	"context"
	"time"

	"github.com/agentwork/agentwork/work"
)

// Subscribe returns a Subscription to o's completion notices, approval
// requests (work.NoticeApproval, once per Work that awaits approval after
// the Subscription began) and accepted updates (work.NoticeUpdate, once
// per update accepted after the Subscription began, in order, before its
// Work's settlement notice; its size and sequence number are read from
// the Work's workflow), as work.Supervisor.Subscribe. The notices come from reading o's registry
// every poll interval (WithPollInterval): Temporal has no push to a client.
// The poller reads the registry with no age bound applied: Work that ends
// and expires (WithRetention) between two polls still has its notice, as
// in-process, where the notice goes out as the Work ends.
func (e *Engine) Subscribe(ctx context.Context, o work.Owner, buffer int) (*work.Subscription, error) {
	if err := work.ValidateOwner(o); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	recs, err := e.registry(ctx, o)
	if err != nil {
		return nil, err
	}
	asked := map[string]bool{} // the Work whose approval notice went out
	// The last update of each Work notified (engine_updates.go).
	updated := map[string]int{}
	for _, r := range recs {
		updated[r.ID] = r.Updates
		if r.State.Terminal() {
			seen[r.ID] = true
		}
		if r.Approval {
			asked[r.ID] = true
		}
	}
	// The poller outlives Subscribe's ctx: it ends with the Subscription,
	// whose stop also interrupts a read in progress (each read capped at
	// the RPC timeout).
	pctx, stop := context.WithCancel(context.Background())
	sub, publish, closeFn := work.NewSubscription(buffer, stop)
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		stop()
		return nil, work.ErrClosed
	}
	e.subs[sub] = closeFn
	e.wg.Add(1)
	e.mu.Unlock()
	go func() {
		defer e.wg.Done()
		defer func() {
			e.mu.Lock()
			delete(e.subs, sub)
			e.mu.Unlock()
		}()
		tick := time.NewTicker(e.cfg.pollInterval)
		defer tick.Stop()
		for {
			select {
			case <-pctx.Done():
				return
			case <-tick.C:
			}
			recs, err := e.registry(pctx, o)
			if err != nil || pctx.Err() != nil {
				continue
			}
			for _, r := range recs {
				if r.Approval && !r.State.Terminal() && !asked[r.ID] {
					asked[r.ID] = true
					publish(work.Notice{Kind: work.NoticeApproval, WorkID: r.ID, Target: r.Label, State: r.State, Time: r.Requested})
				}
				if r.Updates > updated[r.ID] {
					updated[r.ID] = e.updateNotices(pctx, o, r, updated[r.ID], publish)
				}
				if r.State.Terminal() && !seen[r.ID] {
					seen[r.ID] = true
					publish(work.Notice{WorkID: r.ID, Target: r.Label, State: r.State,
						ResultAvailable: r.HasResult, Time: r.Finished})
				}
			}
		}
	}()
	return sub, nil
}
