package restate

import (
	"context"

	"github.com/agentwork/agentwork/work"
)

// Subscribe returns a Subscription to o's completion notices and
// approval requests (work.NoticeApproval, once per Work that awaits
// approval after the Subscription began) and accepted updates
// (work.NoticeUpdate, in order, before its Work's settlement notice), as
// work.Supervisor.Subscribe. The notices come from reading o's registry
// every poll interval (WithPollInterval), with no age bound applied: Work
// that settles and expires (WithRetention) between two polls still has
// its notice (durable.Life.Subscribe).
func (e *Engine) Subscribe(ctx context.Context, o work.Owner, buffer int) (*work.Subscription, error) {
	read := func(ctx context.Context) ([]ownerRecord, error) { return e.registry(ctx, o) }
	updates := func(ctx context.Context, r ownerRecord, seen int, publish func(work.Notice)) int {
		return e.updateNotices(ctx, o, r, seen, publish)
	}
	return e.life.Subscribe(ctx, o, buffer, e.cfg.pollInterval, read, updates)
}
