package driver

import (
	"context"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/internal/seam"
	"github.com/agentwork/agentwork/work/observe"
)

// Engine is what an engine implementation gives NewEngine: every method
// of work.Engine but Shutdown, and the reads work/boundary makes of an
// engine (Rows, Settled, Live, Observer, Now), with the contract
// work.Engine and work/boundary document (Portable has most of them,
// written once for every durable engine). An implementation may have
// Shutdown too, which then hands its report to its Observer itself, once
// (observe.ShutdownObserver); without it work.Engine's Shutdown closes it
// and reports.
type Engine interface {
	Start(ctx context.Context, spec work.Spec) (work.Ref, error)
	Call(ctx context.Context, spec work.Spec) (string, error)
	Status(ctx context.Context, o work.Owner, id string) (work.Status, error)
	List(ctx context.Context, o work.Owner) ([]work.Status, error)
	Rows(ctx context.Context, o work.Owner) (rows []observe.Row, more int, err error)
	Result(ctx context.Context, o work.Owner, id string, timeout time.Duration) (work.Status, string, error)
	Cancel(ctx context.Context, o work.Owner, id string) (work.CancelReceipt, error)
	Detach(ctx context.Context, o work.Owner, id string) (work.DetachReceipt, error)
	Send(ctx context.Context, o work.Owner, id, commandID, message string) (work.SendReceipt, error)
	Release(ctx context.Context, o work.Owner) error
	SetPool(ctx context.Context, o work.Owner, b work.Budget) error
	Subscribe(ctx context.Context, o work.Owner, buffer int) (*work.Subscription, error)
	Settled(ctx context.Context, o work.Owner) ([]work.Status, error)
	Live(ctx context.Context, o work.Owner) (bool, error)
	Pending(ctx context.Context, o work.Owner) ([]work.ApprovalRequest, error)
	Approve(ctx context.Context, o work.Owner, id string) error
	Deny(ctx context.Context, o work.Owner, id string) error
	Updates(ctx context.Context, o work.Owner, id string, after int) ([]work.Update, error)
	Answer(ctx context.Context, o work.Owner, id, commandID, message string) (work.SendReceipt, error)
	Observer() observe.Observer
	Now() time.Time
	Snapshot(ctx context.Context) (observe.Snapshot, error)
	Close(ctx context.Context) error
}

// NewEngine returns the work.Engine that impl implements: what a runner's
// constructor returns to its users. It returns nil for a nil impl.
func NewEngine(impl Engine) *work.Engine {
	if impl == nil {
		return nil
	}
	return seam.NewEngine(impl).(*work.Engine)
}

// Forwarder is the Engine that forwards every call to the *work.Engine
// it holds: its methods, Shutdown included, and work/boundary's reads for
// the driver methods work.Engine does not export (Rows, Settled, Live,
// Observer, Now). An implementation that decorates another engine embeds
// a Forwarder and overrides only the methods it changes; its Shutdown
// stays the engine's. A Forwarder holding nil answers as a nil
// *work.Engine does (work.ErrNotInitialized).
type Forwarder struct{ *work.Engine }

// Rows is boundary.Rows of the engine.
func (f Forwarder) Rows(ctx context.Context, o work.Owner) ([]observe.Row, int, error) {
	return boundary.Rows(ctx, f.Engine, o)
}

// Settled is boundary.Settled of the engine.
func (f Forwarder) Settled(ctx context.Context, o work.Owner) ([]work.Status, error) {
	return boundary.Settled(ctx, f.Engine, o)
}

// Live is boundary.Live of the engine.
func (f Forwarder) Live(ctx context.Context, o work.Owner) (bool, error) {
	return boundary.Live(ctx, f.Engine, o)
}

// Observer is boundary.Observer of the engine.
func (f Forwarder) Observer() observe.Observer { return boundary.Observer(f.Engine) }

// Now is boundary.Now of the engine.
func (f Forwarder) Now() time.Time { return boundary.Now(f.Engine) }
