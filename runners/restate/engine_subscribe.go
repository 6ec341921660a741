package restate

import (
	"context"
	"time"

	"github.com/agentwork/agentwork/work"
)

// Subscribe returns a Subscription to o's completion notices and
// approval requests (work.NoticeApproval, once per Work that awaits
// approval after the Subscription began) and accepted updates
// (work.NoticeUpdate, in order, before its Work's settlement notice), as
// work.Supervisor.Subscribe. The notices come from reading o's registry
// every poll interval (WithPollInterval).
func (e *Engine) Subscribe(ctx context.Context, o work.Owner, buffer int) (*work.Subscription, error) {
	recs, err := e.registry(ctx, o)
	if err != nil {
		return nil, err
	}
	seen, asked := map[string]bool{}, map[string]bool{}
	updated := map[string]int{} // the last update of each Work notified
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
					publish(work.Notice{Kind: work.NoticeApproval, WorkID: r.ID, Target: r.Label, State: r.State, Time: r.Created})
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
