package temporal

import (
	"context"

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
// in-process, where the notice goes out as the Work ends. The poller
// outlives ctx: it ends with the Subscription, whose stop also interrupts
// a read in progress (each read capped at the RPC timeout).
func (e *Engine) Subscribe(ctx context.Context, o work.Owner, buffer int) (*work.Subscription, error) {
	read := func(ctx context.Context) ([]ownerRecord, error) { return e.registry(ctx, o) }
	updates := func(ctx context.Context, r ownerRecord, seen int, publish func(work.Notice)) int {
		return e.updateNotices(ctx, o, r, seen, publish)
	}
	return e.life.Subscribe(ctx, o, buffer, e.cfg.pollInterval, read, updates)
}
