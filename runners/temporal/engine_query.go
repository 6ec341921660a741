package temporal

import (
	"context"
	"errors"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// portable is the Engine's part written once in driver.Portable over store:
// its reads, Detach, Send, Release, SetPool and Updates.
type portable = driver.Portable

// store is the Engine as the driver.Store (and driver.Waiter) that its
// reads use: an owner's registry workflow, each Work's workflow for its
// output and its attempt's heartbeat for its progress.
type store engine

// Progress reads a running Work's progress counts from its attempt's
// last heartbeat (Engine.progress).
func (s *store) Progress(ctx context.Context, id string) (observe.Progress, bool, error) {
	p, err := (*engine)(s).progress(ctx, id)
	return p, err == nil && p != (observe.Progress{}), err
}

// Records reads o's registry, every record (Engine.registry).
func (s *store) Records(ctx context.Context, o work.Owner) ([]ownerRecord, error) {
	return (*engine)(s).registry(ctx, o)
}

// Wait waits for the Work workflow's result: its Final record says what
// the registry holds now, with no second read.
func (s *store) Wait(ctx context.Context, _ work.Owner, id string) (ownerRecord, string, bool, error) {
	var res workOutcome
	if err := (*engine)(s).c.GetWorkflow(ctx, id, "").Get(ctx, &res); err != nil || res.Final == nil {
		return ownerRecord{}, "", false, nil
	}
	if res.Final.Detached {
		// Detached or released while awaited, before it ended: its owner
		// no longer sees it (as in-process).
		return ownerRecord{}, "", false, work.ErrNotFound
	}
	return *res.Final, res.Output, true, nil
}

// Output reads completed Work's output: its workflow's result, read from
// Temporal (a result that completed while this process was down is read
// the same way).
func (s *store) Output(ctx context.Context, _ work.Owner, id string) (string, error) {
	e := (*engine)(s)
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	var res workOutcome
	if err := e.c.GetWorkflow(ctx, id, "").Get(ctx, &res); err != nil {
		return "", fromTemporal(err)
	}
	return res.Output, nil
}

// MarkRead tells o's registry that o read id's result.
func (s *store) MarkRead(ctx context.Context, o work.Owner, id string) error {
	return (*engine)(s).tell(ctx, o, updateRead, id)
}

// progress reads a running Work's progress counts from its attempt's last
// heartbeat: zero when there is none yet or the describe fails (best
// effort); work.ErrUnavailable when the heartbeat's payload does not
// decode with the Engine's data converter (WithDataConverter).
func (e *engine) progress(ctx context.Context, id string) (observe.Progress, error) {
	ctx, cancel := e.rpc(ctx)
	defer cancel()
	d, err := e.c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return observe.Progress{}, nil
	}
	return heartbeatProgress(e.cfg.dc, d.GetPendingActivities())
}

// heartbeatProgress decodes with dc the progress counts of the last
// heartbeat of a Work's pending attempt (zero for none); a heartbeat that
// does not decode is undecodable's error.
func heartbeatProgress(dc converter.DataConverter, pending []*workflowpb.PendingActivityInfo) (observe.Progress, error) {
	for _, a := range pending {
		if det := a.GetHeartbeatDetails(); det != nil && len(det.GetPayloads()) > 0 {
			var p observe.Progress
			if err := decodePayload(dc, det.GetPayloads()[0], &p); err != nil {
				return observe.Progress{}, err
			}
			return p, nil
		}
	}
	return observe.Progress{}, nil
}

// undecodable is the error of a payload that does not decode: with the
// Engine's data converter (a client dialed with a codec the Engine was not
// given, WithDataConverter), or with the client's (a query's answer that
// a Worker under another codec encoded): work.ErrUnavailable, the cause
// reachable.
func undecodable(err error) error {
	return driver.Wrap(driver.Detail(work.ErrUnavailable, "a payload does not decode with the data converter (WithDataConverter, the client's)"), err)
}

// maxReadPayload caps a payload the runner decodes itself (a heartbeat's
// progress counts, a memo's field, each a few dozen bytes as the runner
// writes them): a larger one is refused before it is decoded.
const maxReadPayload = 64 << 10

// errPayloadTooLarge is a payload over maxReadPayload.
var errPayloadTooLarge = errors.New("temporal: a payload over its byte cap")

// decodePayload decodes p with dc into out; a payload over maxReadPayload
// is refused unread, and one that does not decode is undecodable's error
// either way.
func decodePayload(dc converter.DataConverter, p *commonpb.Payload, out any) error {
	if n := proto.Size(p); n > maxReadPayload {
		return undecodable(fmt.Errorf("%w (%d bytes, cap %d)", errPayloadTooLarge, n, maxReadPayload))
	}
	if err := dc.FromPayload(p, out); err != nil {
		return undecodable(err)
	}
	return nil
}

// registry reads o's registry (nil when o has none), with no age applied,
// retrying a transient failure up to tries times while ctx is not
// done.
func (e *engine) registry(ctx context.Context, o work.Owner) ([]ownerRecord, error) {
	if err := driver.ValidateOwner(o); err != nil {
		return nil, err
	}
	// The registry answers through a worker: a query that reached a worker
	// that died (its sticky queue) fails or times out, the next one goes to
	// a live worker.
	var v converter.EncodedValue
	err := retry(ctx, e.cfg.RPCTimeout, tries, func(ctx context.Context) (err error) {
		v, err = e.c.QueryWorkflow(ctx, ownerWorkflowID(o.ID()), "", queryRecords)
		return err
	})
	if err != nil {
		if errors.Is(fromTemporal(err), work.ErrNotFound) {
			return nil, nil
		}
		return nil, fromTemporal(err)
	}
	var recs []ownerRecord
	if err := v.Get(&recs); err != nil {
		return nil, undecodable(err)
	}
	return recs, nil
}
