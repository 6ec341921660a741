package work

import (
	"context"
	"time"

	"github.com/agentwork/agentwork/work/observe"
)

// Engine is where Work runs and is recorded: the seam between the
// model-facing layers (the middleware, the langchaingo adapter) and an
// implementation. *Supervisor is the default, process-local implementation;
// others (a durable runner such as runners/temporal) implement the same
// contract, which the conformance suite in package work/enginetest checks.
//
// The contract, for every implementation:
//
//   - Every method is safe for concurrent use. Every method that can fail
//     or block takes the caller's ctx first and returns an error: an
//     implementation that talks to a remote service bounds each call by
//     ctx (and may cap it with its own timeout), except where abandoning
//     a call could leave it half done (runners/temporal's Start, bounded
//     by its timeout alone, documents this). The in-process Supervisor
//     answers every method but Start, Call and Result from memory and
//     ignores its ctx there.
//   - Owners are isolated: an id that is unknown, or that belongs to another
//     owner (or was detached from this one), is ErrNotFound for every
//     per-Work method. The zero Owner is ErrInvalidOwner (Rows returns
//     nothing and Release does nothing for it, with no error).
//   - Start admits Work atomically against the owner's limits (outstanding,
//     starts, depth) and returns its Ref at once; the child runs later. On
//     failure (ErrInvalidOwner, ErrInvalidSpec, ErrClosed, ErrScopeEnded,
//     ErrLimit) nothing is registered. ctx is the caller's: none of its
//     values or its cancellation reach the child.
//   - Call runs a child in the foreground and returns its exact output;
//     failures are ErrChildFailed (with a Class; result_too_large for an
//     output over the result-byte limit, which applies as to background
//     Work), ErrCancelled or ErrClosed, and admission fails as for Start.
//   - States move only along the lifecycle's edges: queued, running,
//     cancel-requested, then exactly one of completed, failed, cancelled.
//   - Status and List return result-free projections; List returns at most
//     MaxListed, unfinished first, then finished, newest first within each
//     group, and an empty (non-nil) slice for an owner with none.
//   - Rows returns at most MaxRows status-block rows in priority order
//     (unread results, failed, running and cancel-requested, queued, the
//     rest; newest first within each) and how many visible Works it left
//     out. It never carries output or failure text. Its error is non-nil
//     only when the rows cannot be read (e.g. a remote registry that does
//     not answer).
//   - Result returns the exact output of completed Work; for failed or
//     cancelled Work it returns the Status at once. Otherwise it waits
//     until the Work settles, timeout (capped at MaxResultWait; 0 does not
//     wait) passes or ctx is done, and returns the Status then. A negative
//     timeout is ErrInvalidTimeout. The output is meaningful only when the
//     returned Status is completed. That Status has ResultRead as it was
//     before this read: false on the first read of the output.
//   - Cancel: queued Work is cancelled before it runs; running Work becomes
//     cancel-requested and is stopped cooperatively (completion or an
//     unrelated failure may still win); a repeated request is accepted with
//     no change; terminal Work is not accepted.
//   - Detach hides a Work from its owner (ErrNotFound afterwards) without
//     cancelling it.
//   - Send queues guidance for a non-terminal agent child, delivered in
//     order at the child's next model-request boundary
//     (boundary.Guidance). It is idempotent per commandID (same text: the
//     first receipt; other text: ErrConflict) while the Work's command
//     records last; everything it keeps is bounded (ErrMessageTooLarge,
//     ErrMailboxFull). Errors are checked in the order ErrInvalidOwner,
//     ErrEmptyMessage, ErrMessageTooLarge, ErrNotFound, ErrNotAgent,
//     ErrConflict, ErrTerminal, ErrMailboxFull. Cursors count 1, 2, ... per
//     Work.
//   - Release detaches all of an owner's visible Work, cancels the
//     unfinished part and forgets the owner (including its starts budget
//     and its pool). Its error is non-nil only when the release could not
//     be done (e.g. a remote registry that does not answer); releasing an
//     owner the engine does not know, or the zero Owner, is no error.
//   - SetPool gives a top-level owner a pool of turns, tool calls and
//     tokens that each start (and foreground call) reserves its child's
//     Budget from; a start the pool cannot cover fails with
//     ErrBudgetExhausted before any Work exists, and what a settled child
//     did not spend is refunded. The zero Owner or a child's scope is
//     ErrInvalidOwner; a negative Budget field is ErrInvalidBudget
//     (Budget.Validate).
//   - Subscribe returns a Subscription to content-free completion
//     notices for o's visible Work (one per Work reaching a terminal state
//     from now on); it never waits for the reader (a full buffer drops and
//     counts). A reader treats a Notice as a wake-up and reads the state
//     with List or Status. Engines other than the Supervisor build it with
//     work/driver.
//   - A Spec with NeedsApproval is held queued, out of the dispatch queue
//     and holding no slot, until it is answered (Pending, Approve, Deny);
//     Call refuses it (ErrInvalidSpec). o is the launching owner, or
//     Approver() for a role that sees and answers every owner's requests.
//     A Work that is unknown, that belongs to another owner or that does
//     not await approval (any more: an answer counts once) is ErrNotFound,
//     as is an empty id; the zero Owner is ErrInvalidOwner. Pending
//     returns the Work visible to o that awaits approval, oldest request
//     first (an empty, non-nil slice for none); Approve lets the Work join
//     the dispatch queue; Deny cancels it (Status.Class ClassDenied).
//   - Updates returns a Work's updates (ReportUpdate) with Seq > after, in
//     order; they stay readable after the Work ends, until its record is
//     evicted with it. Answer queues guidance as Send does, for an agent or
//     a function child (the work tool's send still refuses a function
//     child): the child reads it at its next boundary (an agent) or from
//     AwaitAnswer (a function child).
//   - An implementation without approvals or without updates answers
//     errors.ErrUnsupported from their methods, and refuses a Spec with
//     NeedsApproval (ErrInvalidSpec) or an update policy
//     (Spec.Updates) it cannot keep. Every engine in this module has
//     both.
//   - Settled returns every terminal Work visible to o, oldest settlement
//     first, with no limit but the retention (an empty slice for none);
//     Live reports whether o has visible Work that is not terminal; its
//     error is ErrInvalidOwner for the zero Owner, else non-nil only when
//     that cannot be read (as for Rows). A
//     reader woken by a Notice reads Live first, then Settled.
//   - Observer returns the Observer the layers above report through (never
//     nil); Now returns the implementation's clock's time.
//
// What an implementation may legitimately choose: the Ref's guarantees
// (Ref.Guarantees), the attempt count in Status, how many Works run at once
// and where.
type Engine interface {
	Start(ctx context.Context, spec Spec) (Ref, error)
	Call(ctx context.Context, spec Spec) (string, error)
	Status(ctx context.Context, o Owner, id string) (Status, error)
	List(ctx context.Context, o Owner) ([]Status, error)
	Rows(ctx context.Context, o Owner) (rows []Row, more int, err error)
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
}

// The in-process Supervisor is the default Engine.
var _ Engine = (*Supervisor)(nil)
