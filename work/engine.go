package work

import (
	"context"
	"time"

	"github.com/agentwork/agentwork/work/internal/seam"
	"github.com/agentwork/agentwork/work/observe"
)

// engineDriver is an Engine's implementation when it is not the
// in-process one: a durable runner's engine, given by work/driver's
// NewEngine (package seam). It has every method of the Engine but
// Shutdown, which it may have (shutdowner), and the reads work/boundary
// makes of an engine (Rows, Settled, Live, Observer, Now).
type engineDriver interface {
	Start(ctx context.Context, spec Spec) (Ref, error)
	Call(ctx context.Context, spec Spec) (string, error)
	Status(ctx context.Context, o Owner, id string) (Status, error)
	List(ctx context.Context, o Owner) ([]Status, error)
	Rows(ctx context.Context, o Owner) (rows []observe.Row, more int, err error)
	Result(ctx context.Context, o Owner, id string, timeout time.Duration) (Status, string, error)
	Cancel(ctx context.Context, o Owner, id string) (CancelReceipt, error)
	Detach(ctx context.Context, o Owner, id string) (DetachReceipt, error)
	Send(ctx context.Context, o Owner, id, commandID, message string) (SendReceipt, error)
	Release(ctx context.Context, o Owner) error
	SetPool(ctx context.Context, o Owner, b Budget) error
	Subscribe(ctx context.Context, o Owner, buffer int) (*Subscription, error)
	Settled(ctx context.Context, o Owner) ([]Status, error)
	Live(ctx context.Context, o Owner) (bool, error)
	Pending(ctx context.Context, o Owner) ([]ApprovalRequest, error)
	Approve(ctx context.Context, o Owner, id string) error
	Deny(ctx context.Context, o Owner, id string) error
	Updates(ctx context.Context, o Owner, id string, after int) ([]Update, error)
	Answer(ctx context.Context, o Owner, id, commandID, message string) (SendReceipt, error)
	Observer() observe.Observer
	Now() time.Time
	Snapshot(ctx context.Context) (observe.Snapshot, error)
	Close(ctx context.Context) error
}

// shutdowner is an engineDriver with a graceful Shutdown of its own.
type shutdowner interface {
	Shutdown(ctx context.Context) (observe.ShutdownReport, error)
}

// work/driver makes an Engine of another implementation; work/boundary
// reads an Engine for adapters.
func init() {
	seam.Rows, seam.Settled, seam.Live = (*Engine).rows, (*Engine).settled, (*Engine).hasLive
	seam.Now, seam.Observer = (*Engine).now, (*Engine).obs
	seam.FromChild = (*Engine).closedFromChild
	seam.NewEngine = func(impl any) any {
		d, _ := impl.(engineDriver)
		if d == nil {
			return (*Engine)(nil)
		}
		return &Engine{impl: d}
	}
}
