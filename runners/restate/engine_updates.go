package restate

import (
	"context"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

func (e *Engine) readUpdates(ctx context.Context, o work.Owner, id string, after int) (driver.UpdatesReply, error) {
	var rep driver.UpdatesReply
	if err := e.in.object(ctx, controlService, id, hUpdates, "", driver.UpdatesQuery{Owner: o.ID(), After: after}, &rep); err != nil {
		return driver.UpdatesReply{}, fromIngress(ctx, err)
	}
	return rep, nil
}

// updateNotices publishes a NoticeUpdate for each of r's updates after
// seen (content-free: its sequence number, size and time, read from the
// control object's UpdateSizes, never the values) and returns the last
// one published (seen when the read failed: the next poll tries again).
func (e *Engine) updateNotices(ctx context.Context, o work.Owner, r ownerRecord, seen int, publish func(work.Notice)) int {
	var rep driver.UpdateMetaReply
	if e.in.object(ctx, controlService, r.ID, hSizes, "", driver.UpdatesQuery{Owner: o.ID(), After: seen}, &rep) != nil || !rep.Found {
		return seen
	}
	return driver.PublishUpdates(r, rep.Updates, seen, publish)
}
