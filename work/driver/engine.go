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
// of work.Engine but Shutdown, with the contract work.Engine documents
// (Portable has most of them, written once for every durable engine). An
// implementation may have Shutdown too; without it work.Engine's Shutdown
// closes it.
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

// Forward returns the Engine that forwards every call to e (Shutdown
// included): what an implementation that decorates another engine embeds,
// overriding only the methods it changes. It returns nil for a nil e.
func Forward(e *work.Engine) Engine {
	if e == nil {
		return nil
	}
	return forward{e}
}

// forward is Forward's Engine: e's methods, and work/boundary's reads of
// e for the driver methods e does not export.
type forward struct{ *work.Engine }

func (f forward) Rows(ctx context.Context, o work.Owner) ([]observe.Row, int, error) {
	return boundary.Rows(ctx, f.Engine, o)
}

func (f forward) Settled(ctx context.Context, o work.Owner) ([]work.Status, error) {
	return boundary.Settled(ctx, f.Engine, o)
}

func (f forward) Live(ctx context.Context, o work.Owner) (bool, error) {
	return boundary.Live(ctx, f.Engine, o)
}

func (f forward) Observer() observe.Observer { return boundary.Observer(f.Engine) }
func (f forward) Now() time.Time             { return boundary.Now(f.Engine) }
