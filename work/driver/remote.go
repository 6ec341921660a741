package driver

import (
	"context"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/internal/limit"
	"github.com/agentwork/agentwork/work/internal/seam"
	"github.com/agentwork/agentwork/work/observe"
)

// Remote describes a child run that an engine other than the in-process
// one executes (on a durable runner's worker process), so that the child
// finds the same work.Execution in its context as in-process (WithRemote).
type Remote struct {
	// WorkID is the Work's id.
	WorkID string
	// OwnerID and OwnerDepth are the Work's owner's (work.Owner.ID,
	// work.Owner.Depth): the child's own scope is one level deeper (the depth
	// limit applies to Work started in it).
	OwnerID    string
	OwnerDepth int
	// Guidance drains the Work's guidance at a model-request boundary:
	// it returns the messages accepted since the last call, in order. It
	// may be nil (no guidance).
	Guidance func() []string
	// Budget is the child's effective budget, resolved by the engine
	// (defaults and ceiling applied): its turns, tool calls and tokens are
	// counted at the boundary as in-process (boundary.BeginRequest,
	// EndRequest, BeginToolCall). Zero limits are not enforced; the engine enforces
	// MaxDuration.
	Budget work.Budget
	// FailOnBudget refuses the final request when the budget runs out
	// (work.Spec.FailOnBudget).
	FailOnBudget bool
	// Event, when set, receives the run's content-free events as they
	// happen, with WorkID, Owner, Depth and Time set (the engine adds the
	// target): observe.EventBudgetExhausted when a budget runs out,
	// observe.EventProgress at most once per second when the child
	// reports progress, and observe.EventUpdate for each update Update
	// decided (not for a duplicate). It must not block.
	Event func(observe.Event)
	// Update, when set, decides on an update the child reports
	// (work.ReportUpdate): the engine keeps the Work's UpdateLog (Accept,
	// with End once the Work is ending) and answers its receipt, or the
	// refusal reason, which the Execution turns into
	// work.ErrUpdateRefused. nil refuses every update with
	// observe.UpdateRefusedNotDeclared (a Work that declares none).
	Update func(key string, value []byte, question bool) (work.UpdateReceipt, string)
	// AwaitAnswer, when set, is the wait of a question the child asked
	// (an accepted update with question set): it blocks until guidance
	// for the Work has arrived since the question (true; the Execution
	// then drains it with boundary.Guidance), or until the question's
	// timeout passes or ctx ends (false). The Execution calls it at the
	// child's next boundary.BeginRequest (with the context given to WithRemote) and from
	// work.AwaitAnswer. nil: a question is never waited for, and counts as
	// unanswered.
	AwaitAnswer func(ctx context.Context) bool
}

// WithRemote returns ctx carrying a work.Execution for r: WorkID returns
// r.WorkID, Scope an owner one level deeper than the Work's owner,
// boundary.Guidance calls r.Guidance, the boundary counts against
// r.Budget, work.ReportProgress, boundary.BeginRequest and
// boundary.BeginToolCall count progress reported through r.Event, and
// work.ReportUpdate, work.AwaitAnswer and a question's wait at
// boundary.BeginRequest use r.Update and r.AwaitAnswer. An
// engine calls it (Slots.Run does) on the context it runs a child with;
// the scope's Work is the engine's to release when the child returns.
// Classify reads what the run spent.
func WithRemote(ctx context.Context, r Remote) context.Context {
	ctx, _ = attach(ctx, r)
	return ctx
}

// attach is WithRemote, which also returns the Execution.
func attach(ctx context.Context, r Remote) (context.Context, *work.Execution) {
	sr := seam.Remote{WorkID: r.WorkID, OwnerID: r.OwnerID, OwnerDepth: r.OwnerDepth, Guidance: r.Guidance,
		Dims: BudgetDims(r.Budget), MaxDuration: r.Budget.MaxDuration, FailOnBudget: r.FailOnBudget,
		Event: r.Event, AwaitAnswer: r.AwaitAnswer}
	if u := r.Update; u != nil {
		sr.Update = func(key string, value []byte, question bool) (int, bool, string) {
			rec, reason := u(key, value, question)
			return rec.Seq, rec.Duplicate, reason
		}
	}
	ctx, ex := seam.Attach(ctx, sr)
	return ctx, ex.(*work.Execution)
}

// exhausted returns the budget that ran out in ex's run ("" while none
// has) and whether its boundary refused a request.
func exhausted(ex *work.Execution) (budget string, refused bool) { return seam.Exhausted(ex) }

// newSubscription returns a work.Subscription this engine feeds, with a
// buffer of buffer notices (the in-process default when buffer < 1):
// publish delivers a Notice without waiting (dropped and counted when the
// buffer is full, except that a settlement takes the place of the oldest
// buffered notice of another kind, as work's Subscribe describes; ignored
// once closed); closeFn closes the channel (idempotent); onClose, when
// set, runs once when the Subscription is closed by either, so that the
// engine stops feeding it.
func newSubscription(buffer int, onClose func()) (sub *work.Subscription, publish func(work.Notice), closeFn func()) {
	s, p, closeFn := seam.NewSubscription(buffer, onClose)
	return s.(*work.Subscription), p.(func(work.Notice)), closeFn
}

// Limits is an engine's effective configuration as work's options set it
// (ResolveLimits): the same values the in-process engine runs with. Its
// fields: MaxRunning, MaxOutstanding, MaxStarts, MaxDepth, MaxDuration
// (the default per-Work deadline, 0: none), MaxResultBytes,
// RetainTerminal and RetainAge (WithRetention), MaxMessageBytes,
// MaxQueuedGuidance and MaxQueuedGuidanceBytes (WithGuidanceQueue),
// MaxCommandRecords, Observer (observe.NopObserver when none was given),
// and the deployment view's ExportDeployment, DeploymentTargets,
// SnapshotInterval and StatusRows; each is its work option's value.
type Limits = limit.Limits

// ResolveLimits returns the limits of an in-process engine made with
// opts, and the error its Start, Call and SetPool would return for an
// invalid option (work.ErrInvalidLimit, work.ErrInvalidBudget; nil when
// every option is valid). It is how an engine that runs Work elsewhere
// gives every value of these options the in-process meaning. Options
// other than the limit, budget, deployment-view and observer options do
// not change the result.
func ResolveLimits(opts ...work.Option) (Limits, error) { return seam.ResolveLimits(opts) }
