package work

import (
	"context"
	"crypto/sha256"
	"time"

	"github.com/agentwork/agentwork/work/observe"
)

// Target describes the child a Work runs.
type Target struct {
	Label string       // the authored tool-map key; required
	ID    string       // the child's own id, reported as Ref.TargetID; defaults to Label
	Kind  observe.Kind // KindAgent or KindFunction; required
}

func (t Target) id() string {
	if t.ID != "" {
		return t.ID
	}
	return t.Label
}

// RunFunc is a child's body. It runs on its own goroutine with a context
// that carries only what the Observer bound (for example a span) and the
// Execution; it must return when ctx is done (cancellation is cooperative).
type RunFunc func(ctx context.Context) (string, error)

// Spec describes Work to start.
type Spec struct {
	Owner  Owner
	Target Target
	Run    RunFunc
	// Input is the child's own input, the one Run was built with. An
	// Engine that runs children in other processes starts them from
	// Target.Label and Input; the in-process engine ignores it.
	Input string
	// MaxResultBytes, when > 0, lowers the engine's output limit for this
	// Work (WithMaxResultBytes); it never raises it, and bounds the Work
	// on its own when the engine has no limit.
	MaxResultBytes int
	// Budget bounds the child's turns, tool calls, tokens and duration
	// (Budget.MaxDuration, the one way to set a Work's deadline); see
	// Budget for inheritance.
	Budget Budget
	// FailOnBudget makes an exhausted budget fail the Work (class
	// budget_exhausted) instead of granting a final request.
	FailOnBudget bool
	// CallID is the launch's identity (the model's tool-call id), or "".
	// Start with a CallID the owner already launched with returns the
	// same Ref and starts nothing when Target.Label and InputDigest match,
	// and fails with ErrConflict when they do not. An owner's engine
	// remembers its 256 newest launch identities, as a SHA-256 digest of
	// each (never the identity); a replay of an older one starts new
	// Work.
	CallID string
	// InputDigest is a digest of the child's input (SHA-256), compared
	// for a repeated CallID. The engine keeps only the digest.
	InputDigest [sha256.Size]byte
	// Job, when set, makes the Work an external job (Target.Kind must be
	// KindFunction; Run is then unused): submitted once when it leaves the
	// queue, then polled with backoff, holding no goroutine and no running
	// slot between polls (see Job).
	Job *Job
	// NeedsApproval keeps the Work queued, out of the dispatch queue,
	// until the application approves it (Engine.Approve) or denies it
	// (cancelled, ClassDenied); Input is what the approver reads.
	NeedsApproval bool
	// ApprovalTimeout is how long the Work waits for its approval before
	// it ends cancelled with ClassApprovalTimeout (0: 24 hours; a
	// negative value is invalid).
	ApprovalTimeout time.Duration
	// Updates, when set, declares that the Work reports updates (and may
	// ask questions), bounded by it (see UpdatePolicy).
	Updates *UpdatePolicy
}
