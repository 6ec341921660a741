package restate

import (
	"context"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// reads is the Engine's read side (Status, List, Rows, Result, Settled,
// Live, Subscribe), written once in driver.Reads over store.
type reads = driver.Reads

// store is the Engine as the driver.Store that its reads use: an owner's
// registry object, and each Work's control object for its output and
// progress.
type store Engine

// Records reads o's registry, every record (nil when o has none).
func (s *store) Records(ctx context.Context, o work.Owner) ([]ownerRecord, error) {
	e := (*Engine)(s)
	if e.cfg.ingress == "" {
		return nil, work.ErrUnavailable.Detail("no ingress (WithIngress)")
	}
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	var recs []ownerRecord
	if err := e.in.object(ctx, ownerService, o.ID(), hRecords, "", nil, &recs); err != nil {
		return nil, fromIngress(ctx, err)
	}
	return recs, nil
}

// Progress reads a running Work's last progress counts from its control
// object (its attempt sends them there when they change, see
// Worker.watch).
func (s *store) Progress(ctx context.Context, id string) (work.Progress, bool) {
	e := (*Engine)(s)
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	var v controlView
	if e.in.object(ctx, controlService, id, hPeek, "", nil, &v) != nil || v.Progress == (work.Progress{}) {
		return work.Progress{}, false
	}
	return v.Progress, true
}

// Output reads completed Work's output from its control object, which
// keeps it while the registry keeps the Work's record: one that completed
// while this process was down is read the same way.
func (s *store) Output(ctx context.Context, o work.Owner, id string) (string, error) {
	e := (*Engine)(s)
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	var rep outputReply
	if err := e.in.object(ctx, controlService, id, hOutput, "", o.ID(), &rep); err != nil {
		return "", fromIngress(ctx, err)
	}
	if !rep.Found {
		return "", work.ErrNotFound // detached or released meanwhile
	}
	return rep.Output, nil
}

// MarkRead tells o's registry that o read id's result.
func (s *store) MarkRead(ctx context.Context, o work.Owner, id string) error {
	e := (*Engine)(s)
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	return e.in.object(ctx, ownerService, o.ID(), hRead, "", id, nil)
}

// UpdateNotices publishes the update notices of r (Engine.updateNotices).
func (s *store) UpdateNotices(ctx context.Context, o work.Owner, r ownerRecord, seen int, publish func(work.Notice)) int {
	return (*Engine)(s).updateNotices(ctx, o, r, seen, publish)
}
