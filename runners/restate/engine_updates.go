package restate

import (
	"context"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

var _ work.Updater = (*Engine)(nil)

// Updates returns the Work's updates with Seq > after, in order
// (work.Updater), read from its control object after the owner's
// registry checked the owner (it answers from the count alone when there
// is nothing after the cursor): readable after the Work ended while the
// registry retains its record.
func (e *Engine) Updates(ctx context.Context, o work.Owner, id string, after int) ([]work.Update, error) {
	r, err := e.Lookup(ctx, o, id)
	if err != nil {
		return nil, err
	}
	if r.Updates <= max(after, 0) {
		return []work.Update{}, nil
	}
	rep, err := e.readUpdates(ctx, o, id, after)
	if err != nil {
		return nil, err
	}
	if !rep.Found {
		return nil, work.ErrNotFound
	}
	if rep.Updates == nil {
		return []work.Update{}, nil
	}
	return rep.Updates, nil
}

func (e *Engine) readUpdates(ctx context.Context, o work.Owner, id string, after int) (updatesReply, error) {
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	var rep updatesReply
	if err := e.in.object(ctx, controlService, id, hUpdates, "", updatesQuery{Owner: o.ID(), After: after}, &rep); err != nil {
		return updatesReply{}, fromIngress(ctx, err)
	}
	return rep, nil
}

// Answer queues guidance as Send does, for an agent or a function child
// (work.Updater): it answers the Work's open questions.
func (e *Engine) Answer(ctx context.Context, o work.Owner, id, commandID, message string) (work.SendReceipt, error) {
	return e.send(ctx, o, id, commandID, message, true)
}

// updateNotices publishes a NoticeUpdate for each of r's updates after
// seen (content-free: its sequence number, size and time, read from the
// control object's UpdateSizes, never the values) and returns the last
// one published (seen when the read failed: the next poll tries again).
func (e *Engine) updateNotices(ctx context.Context, o work.Owner, r ownerRecord, seen int, publish func(work.Notice)) int {
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	var rep driver.UpdateMetaReply
	if e.in.object(ctx, controlService, r.ID, hSizes, "", updatesQuery{Owner: o.ID(), After: seen}, &rep) != nil || !rep.Found {
		return seen
	}
	return driver.PublishUpdates(r, rep.Updates, seen, publish)
}
