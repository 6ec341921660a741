package work

import (
	"context"
	"time"

	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/internal/seam"
)

// Work that waits: external jobs (a child made of a submit step and an
// await step, polled with backoff, holding no goroutine and no running slot
// between polls) and approval before a child starts (the Work stays queued,
// out of the dispatch queue, until the application approves or denies it).
// The model-facing JSON does not change: a waiting job is running, a Work
// awaiting approval is queued.

// Job is a child made of separate submit and await steps: a job at another
// service. Spec.Job carries it in process; a durable engine registers it on
// its workers under the target's label. Nothing but the handle Submit
// returns survives into the wait: Await and Cancel must not depend on a
// closure created by Submit.
type Job struct {
	// Submit starts the job and returns its handle: the bytes the engine
	// stores and passes to Await and Cancel. key is the Work's id, stable
	// across retries: pass it to the service as an idempotency key (a
	// durable engine may retry a Submit whose worker died; that retry is
	// safe only when the service honours the key). Required.
	Submit func(ctx context.Context, key, input string) (handle []byte, err error)
	// Await polls the job once and says whether it is done, still waiting
	// or failed. A Go error is a transient poll error: the engine counts
	// it and polls again with backoff, and fails the Work (ClassError)
	// after MaxPollErrors consecutive errors. Once the Work's maximum
	// duration (Budget.MaxDuration) has passed no poll starts, and the
	// answer of a poll that returns after it decides nothing: the Work
	// fails ClassDeadline, done or not. Required.
	Await func(ctx context.Context, handle []byte) (Poll, error)
	// Cancel, optional, asks the service to stop the job. The engine calls
	// it once when a submitted job's Work is cancelled or exceeds its
	// maximum duration (but not after a poll that answered done or failed).
	// Without it, cancelling stops the wait, not the job.
	Cancel func(ctx context.Context, handle []byte) error
	// Backoff is the delay between polls (zero fields take the defaults).
	Backoff Backoff
	// MaxPolls bounds the polls of this target that run at once (default
	// 8). A poll holds no running slot.
	MaxPolls int
	// MaxPollErrors is how many consecutive poll errors fail the Work
	// (default 3).
	MaxPollErrors int
}

// Backoff is the delay between an external job's polls: Initial after the
// submit, doubling after each poll that answers waiting, capped at Max, and
// back to Initial after a poll that reports progress.
type Backoff struct {
	Initial time.Duration // default 1 s
	Max     time.Duration // default 30 s, or Initial when that is longer
}

// The defaults of Job (Backoff's: contract.PollDelays).
const (
	defaultMaxPolls      = 8
	defaultMaxPollErrors = 3
)

// work/driver's ResolveJob.
func init() { seam.ResolveJob = Job.resolved }

// resolved is work/driver's ResolveJob (which documents it).
func (j Job) resolved() Job {
	if j.MaxPolls <= 0 {
		j.MaxPolls = defaultMaxPolls
	}
	if j.MaxPollErrors <= 0 {
		j.MaxPollErrors = defaultMaxPollErrors
	}
	j.Backoff.Initial, j.Backoff.Max = contract.PollDelays(j.Backoff.Initial, j.Backoff.Max)
	return j
}

// PollState is what one poll of an external job answered.
type PollState uint8

const (
	// PollWaiting: the job is still pending. Nothing is delivered; the
	// engine polls again after the next backoff delay.
	PollWaiting PollState = iota
	// PollDone: the job finished; Poll.Output is the Work's output.
	PollDone
	// PollFailed: the job failed for good; Poll.Class is its class.
	PollFailed
)

// Poll is the answer of one Await.
type Poll struct {
	State PollState
	// Output is the job's output, for PollDone. It is child output: it
	// reaches the application and the model only, never telemetry.
	Output string
	// Class is a low-cardinality failure class for PollFailed: the
	// Work's class when it is a class name (1 to 32 bytes of lower-case
	// letters, digits and '_', starting with a letter), else ClassError,
	// on every engine. Never error text or an id: anything else never
	// becomes a class.
	Class string
	// Progress reports that the job advanced since the last poll: the
	// next delay starts again at Backoff.Initial.
	Progress bool
}

// The classes of Work that waited for an approval that did not come.
const (
	// ClassDenied is the class of a Work cancelled because its approval
	// was denied.
	ClassDenied = "denied"
	// ClassApprovalTimeout is the class of a Work cancelled because no
	// approval came within its approval timeout.
	ClassApprovalTimeout = "approval_timeout"
)

// ApprovalRequest is a Work awaiting approval. Input is the application's
// own data: it reaches the approver, never telemetry, logs or the status
// block.
type ApprovalRequest struct {
	Work        Ref
	TargetLabel string
	Owner       string // the launching owner's id
	Input       string // the child's input
	RequestedAt time.Time
	Deadline    time.Time // when it ends cancelled with ClassApprovalTimeout
}

// approverID is the id of the Owner Approver returns: NewOwner refuses
// nothing, but no id a caller makes starts with a NUL byte by accident.
const approverID = "\x00approver"

// Approver returns the Owner of the approval role: given to Pending,
// Approve and Deny it sees and answers every owner's requests. Every other
// method refuses it (ErrInvalidOwner).
func Approver() Owner { return Owner{id: approverID} }

// IsApprover reports whether o is the Owner Approver returns.
func (o Owner) IsApprover() bool { return o.id == approverID && o.sc == nil }

// NoticeKind says what a Notice reports.
type NoticeKind uint8

const (
	// NoticeSettled (the zero value): the Work reached a terminal state.
	NoticeSettled NoticeKind = iota
	// NoticeApproval: the Work awaits approval (read it with Pending).
	NoticeApproval
)

func (k NoticeKind) String() string {
	switch k {
	case NoticeSettled:
		return "settled"
	case NoticeApproval:
		return "approval"
	case NoticeUpdate:
		return "update"
	}
	return "unknown"
}
