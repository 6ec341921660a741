package middleware

import (
	"context"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// Tool is a model-facing tool. Its method set is langchaingo's tools.Tool,
// so langchaingo tools are Tools and every Tool Prepare returns is a
// langchaingo tool.
type Tool interface {
	Name() string
	Description() string
	Call(ctx context.Context, input string) (string, error)
}

// Schemer is implemented by a Tool that declares the JSON schema of its
// input object. Every child tool Prepare returns implements it.
type Schemer interface {
	Schema() map[string]any
}

// Child is a child agent or a long function that a coordinator calls as a
// tool. Used directly as an entry of Prepare's map it is a foreground child;
// wrapped with Backgroundable it can also run in the background.
type Child struct {
	// ID is the child's own id, reported as the Ref's targetId; it defaults
	// to the entry's label.
	ID string
	// Description is what the model reads about the child.
	Description string
	// Kind is work.KindAgent (takes guidance) or work.KindFunction.
	Kind observe.Kind
	// Schema is the JSON schema of the child's input object. Nil means the
	// child takes one string, asked for as {"input": "..."}, or as plain
	// text in the foreground. A Schema may not declare run_in_background.
	Schema map[string]any
	// Validate, when set, checks the child's input (the input string, or the
	// input object's JSON without run_in_background) before any Work is
	// accepted; its error text (at most its first 256 bytes) is shown to
	// the model, so it must not contain secrets. A panic in Validate refuses the input with a
	// generic message. Schema's required properties and top-level types are
	// always checked first.
	Validate func(input string) error
	// Run is the child's body: it gets the child's input (the string, or the
	// input object's JSON without run_in_background) and returns its exact
	// output. ctx carries no value of the caller's context; it is cancelled
	// on cancel (cooperatively: Run must return) and at the child's maximum
	// duration. work.ExecutionFrom(ctx) gives its guidance and its own
	// owner scope.
	Run func(ctx context.Context, input string) (string, error)
	// MaxResultBytes, when > 0, lowers the engine's output limit for this
	// child (work.Spec.MaxResultBytes): it never raises it, and bounds the
	// child's output on its own on an engine with no limit.
	MaxResultBytes int
	// MaxInputBytes bounds the child tool's raw input (what the model
	// sent, in bytes): over it the call returns the error object with code
	// input_too_large before anything is parsed or started. Zero means
	// DefaultMaxInputBytes; a negative value fails Prepare
	// (ErrNegativeLimit).
	MaxInputBytes int
	// Budget bounds each run of the child (work.Budget: zero fields
	// inherit), reserved from the owner's pool when it has one;
	// FailOnBudget makes an exhausted budget a failure instead of a
	// partial result.
	Budget       work.Budget
	FailOnBudget bool
	// Job, when set, makes the child an external job at another service
	// (Kind must be work.KindFunction; Run is then not used and may be
	// nil): the engine submits it with the Work's id as its idempotency
	// key and polls it with backoff, holding no goroutine and no running
	// slot between polls (see work.Job). A foreground call runs it on the
	// engine's Call, which submits and polls it while the caller waits. An
	// invalid Job (work.Job.Validate) fails Prepare (ErrInvalidChild).
	Job *work.Job
	// NeedsApproval makes each background launch wait, queued and out of
	// the dispatch queue, until the application approves it through the
	// engine (work.Engine.Approve, Deny); a denial ends it cancelled. Only a
	// backgroundable child may need approval (Prepare fails with
	// ErrInvalidChild otherwise), and a foreground call of one is refused
	// with code invalid_child_input before any Work is accepted: the
	// coordinator could not go on while a person decides.
	NeedsApproval bool
	// ApprovalTimeout is how long a launch waits for its approval before
	// it ends cancelled (class approval_timeout); zero means
	// 24 h (work.Spec.ApprovalTimeout's default), a negative value fails Prepare
	// (ErrNegativeLimit).
	ApprovalTimeout time.Duration
	// Updates, when set, declares that the child reports bounded, ordered
	// updates while it runs and may ask a question (work.UpdatePolicy,
	// copied at Prepare; its zero fields take the defaults: 32 updates,
	// 16 KiB, a 10-minute question timeout). An agent child's adapter
	// adds UpdateTool (emit_update) to the child's agent; a function child
	// reports with work.ReportUpdate. A policy work.Spec.Validate refuses
	// fails Prepare (ErrInvalidChild).
	Updates *work.UpdatePolicy
	// ReportUpdates hands the child's accepted updates to the coordinator's
	// model too (an adapter's resume path, as a block of untrusted child
	// content: UpdatesBlock), not only to the application; UpdateFilter,
	// when set, chooses which (it must be pure: it may be asked about an
	// update more than once). ReportUpdates without Updates fails Prepare
	// (ErrInvalidChild).
	ReportUpdates bool
	UpdateFilter  func(work.Update) bool
	// AutoBackground, when set, moves a long call to the background by
	// itself (an opt-in departure from the crux contract, off by
	// default): a call made without run_in_background is admitted as
	// Work from its start (idempotent per tool-call id, counted against
	// the owner's limits like a launch) and waits up to
	// AutoBackground.After for the child's exact output; if the Work is
	// still queued or running then, the call returns its work.ref, the
	// same JSON as a background launch, and the Work goes on in the
	// background. A child that completes in time leaves its Work listed
	// as completed and already read; one that fails or is cancelled in
	// time gets the error object a foreground call gets. An explicit
	// "run_in_background": false is always a foreground call with the
	// exact output. Nil means the Kit's default (WithAutoBackground),
	// none unless given. Only a backgroundable child may have it, and
	// After must be positive: Prepare fails otherwise
	// (ErrInvalidBackgroundOption).
	AutoBackground *AutoBackground
	// BackgroundByDefault makes an absent run_in_background mean true (an
	// opt-in departure from the crux contract, off by default): such a
	// call, plain text included, returns a work.ref at once, and
	// "run_in_background": false runs the child in the foreground with its
	// exact output. The schema and the description tell the model. Only a
	// backgroundable child may have it (ErrInvalidBackgroundOption).
	BackgroundByDefault bool
}

// AutoBackground is a child's bound for moving a call to the background
// (Child.AutoBackground).
type AutoBackground struct {
	// After is the bound, measured on the engine's clock from the call's
	// start: positive.
	After time.Duration
}

// DefaultMaxInputBytes is a child's input bound when Child.MaxInputBytes
// is zero: 1 MiB.
const DefaultMaxInputBytes = 1 << 20

// BackgroundChild is a frozen, inert backgroundable child, made by
// Backgroundable: it does nothing on its own and becomes executable only
// as an entry of a tool map given to Prepare. Its zero value is invalid.
type BackgroundChild struct {
	child Child
	err   error // the child's Schema could not be copied; Prepare reports it
	ok    bool
}

// Backgroundable marks child as backgroundable. The child is copied,
// including a deep copy of its Schema: later changes to the caller's value
// or map do not reach it. A Schema that is not JSON-encodable makes Prepare
// fail.
func Backgroundable(child Child) BackgroundChild {
	var err error
	if child.Schema != nil {
		child.Schema, err = cloneSchema(child.Schema)
	}
	if child.AutoBackground != nil {
		ab := *child.AutoBackground
		child.AutoBackground = &ab
	}
	return BackgroundChild{child: child, err: err, ok: true}
}
