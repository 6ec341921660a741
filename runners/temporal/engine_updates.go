package temporal

import (
	"context"
	"errors"

	"go.temporal.io/sdk/converter"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

var _ work.Updater = (*Engine)(nil)

// Updates returns the updates of the Work id visible to o with Seq >
// after, in order, as work.Supervisor.Updates (an empty slice when there
// are none, or when its Spec declares none). They are the Work
// workflow's state, read with a query: they survive its workers, and
// stay readable after the Work ended while its owner's registry retains
// its record (WithRetention) and Temporal its history (the namespace's
// retention; a query of a closed workflow replays its history on a
// Worker). The registry decides visibility first: ErrInvalidOwner, or
// ErrNotFound (unknown, another owner's, detached or evicted).
func (e *Engine) Updates(ctx context.Context, o work.Owner, id string, after int) ([]work.Update, error) {
	r, err := e.Lookup(ctx, o, id)
	if err != nil {
		return nil, err
	}
	if r.Updates <= max(after, 0) {
		// The registry's count is sent before a child has its receipt.
		return []work.Update{}, nil
	}
	var rep updatesReply
	if err := e.queryWork(ctx, id, queryUpdates, &rep, updatesQuery{Owner: o.ID(), After: after}); err != nil {
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

// Answer queues guidance for a non-terminal Work visible to o as Send
// does, for an agent or a function child, as work.Supervisor.Answer: an
// agent child reads it at its next boundary, a function child from
// work.AwaitAnswer. Guidance accepted while the child has a question open
// answers it (the Work workflow's state). It fails as Send does, except
// that it never returns ErrNotAgent.
func (e *Engine) Answer(ctx context.Context, o work.Owner, id, commandID, message string) (work.SendReceipt, error) {
	return e.send(ctx, o, id, commandID, message, false)
}

// queryWork sends query name with arg to Work id's workflow and decodes
// its answer into out, retrying a transient failure up to queryTries
// times while ctx is not done (a query that reached a worker that died
// fails or times out; the next one goes to a live worker).
func (e *Engine) queryWork(ctx context.Context, id, name string, out, arg any) error {
	var v converter.EncodedValue
	var err error
	for try := 1; ; try++ {
		qctx, cancel := e.rpc(ctx)
		v, err = e.c.QueryWorkflow(qctx, id, "", name, arg)
		cancel()
		if err == nil || try == queryTries || !transient(err) || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		if err := fromTemporal(err); !errors.Is(err, errWorkflowClosed) {
			return err
		}
		return work.ErrNotFound
	}
	return v.Get(out)
}

// updateNotices publishes a NoticeUpdate for each update of r after seen
// (content-free: its sequence number, size and time, read with the
// update-sizes query) and returns the last sequence number published
// (seen when the read failed: the next poll tries again).
func (e *Engine) updateNotices(ctx context.Context, o work.Owner, r ownerRecord, seen int, publish func(work.Notice)) int {
	var rep driver.UpdateMetaReply
	if e.queryWork(ctx, r.ID, queryUpdateMap, &rep, updatesQuery{Owner: o.ID(), After: seen}) != nil || !rep.Found {
		return seen
	}
	return driver.PublishUpdates(r, rep.Updates, seen, publish)
}
