package restate

import (
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// The names of the services and handlers (prefixed with the namespace,
// WithServicePrefix): they are the runner's wire format and must not change
// between the coordinators and workers of one deployment.
const (
	ownerService   = "Owner"   // Virtual Object per owner: the registry
	controlService = "Control" // Virtual Object per Work: its state machine and mailbox
	workService    = "Work"    // Workflow per Work, one service per target: "<ns>.Work.<label>"

	hAdmit    = "Admit"
	hRecord   = "Record"
	hRecords  = "Records"
	hRead     = "MarkRead"
	hDetached = "Detached"
	hRelease  = "Release"
	hPool     = "SetPool"

	hInit   = "Init"
	hClaim  = "Claim"
	hCancel = "Cancel"
	hFinish = "Finish"
	hSend   = "Send"
	hTake   = "Take"
	hPeek   = "Peek"
	hProg   = "Progress"
	hDetach = "Detach"
	hDrop   = "ReleaseWork"

	hWaiting = "Waiting"
	hPolled  = "Polled"

	hOutput = "Output"
	hForget = "Forget"

	hRun  = "Run"
	hStop = "Stop"
)

// ownerRecord is what the owner's registry keeps of one Work (driver.Record).
type ownerRecord = driver.Record

// ownerState is an owner's registry (driver.Registry): its records,
// launch identities, starts, retention and pool.
type ownerState = driver.Registry

// admitRequest asks the owner's registry to admit one Work and, admitted,
// to start it with Work.
type admitRequest struct {
	driver.Admission
	Work workInput
}

type admitReply struct {
	// Error is the refusal's code and message ("" when admitted), with
	// Limit the limit's name or Budget the pool's short dimension.
	Error, Message string `json:",omitempty"`
	Limit, Budget  string `json:",omitempty"`
	Replay         bool   `json:",omitempty"`
	ID, TargetID   string `json:",omitempty"`
	Seq            int64
}

// workInput is a Work: its control object's and its workflow's input. It
// holds the child's input (the child's run needs it on the worker).
type workInput struct {
	ID, Owner      string
	Depth          int
	Label          string
	TargetID       string
	Kind           observe.Kind
	Input          string
	MaxDuration    time.Duration
	MaxResultBytes int
	MaxAttempts    int // 1 unless the target is retryable
	Created        time.Time
	Budget         work.Budget
	FailOnBudget   bool
	Mailbox        driver.MailboxLimits
	Trace          map[string]string     `json:",omitempty"` // the launch's trace context
	AgentID        string                `json:",omitempty"` // the launch's work.TargetInfo, for telemetry
	Provider       string                `json:",omitempty"`
	Job            *jobInput             `json:",omitempty"` // an external job (Spec.Job)
	Approval       *driver.ApprovalInput `json:",omitempty"` // Spec.NeedsApproval
	Updates        *work.UpdatePolicy    `json:",omitempty"` // Spec.Updates, resolved
}

// jobInput is what the coordinator's Spec.Job says of an external job:
// its backoff between polls and how many consecutive poll errors fail it.
type jobInput struct {
	Backoff       work.Backoff
	MaxPollErrors int
}

// claimReply answers an attempt's claim: Run says the child runs (with
// Attempt), Lost that an earlier attempt started and never finished and
// no attempt is left (worker_lost); neither: the Work ended before it ran.
type claimReply struct {
	Run, Lost bool
	// Busy: an earlier attempt started and did not finish, and its rejoin
	// window is open: the step fails and Restate runs it again, until the
	// process holding that attempt takes it back or the window closes
	// (then Lost). rejoin.go.
	Busy    bool `json:",omitempty"`
	Cancel  bool // cancel-requested already: the child starts cancelled
	Attempt int
	Started time.Time // when the first attempt started (a job's deadline runs from it)
}

// runOutcome is an attempt's end: the output (and its size) or a class.
type runOutcome struct {
	// Output is a completed Work's output, given to the control object by
	// the workflow's finish (the step's journaled result holds it too).
	Output   string           `json:",omitempty"`
	Class    string           `json:",omitempty"`
	NotRun   bool             `json:",omitempty"` // the Work ended before it ran
	Bytes    int              `json:",omitempty"`
	Usage    *observe.Usage   `json:",omitempty"` // nil: unknown (the attempt was lost)
	Budget   string           `json:",omitempty"` // the budget that ran out, if one did
	Progress observe.Progress `json:",omitzero"`
	Attempt  int              `json:",omitempty"`
}

// controlView is what the control object tells the child's attempt
// between boundaries (its state), and the Engine of a running Work (its
// last progress counts the attempt sent).
type controlView struct {
	State    observe.State
	Progress observe.Progress `json:",omitzero"`
	Attempt  int              `json:",omitempty"`
}

// sendRequest queues one guidance message.
type sendRequest struct {
	Owner   string
	Command string // SHA-256 of the command id, hex; "" is never deduplicated
	Digest  string // SHA-256 of the text, hex
	Text    string
	Answer  bool `json:",omitempty"` // Engine.Answer: a function child's guidance too
}

type sendReply struct {
	Error  string `json:",omitempty"` // a refusal's code
	Cursor int
	At     time.Time
}

// takeReply is the guidance a boundary takes, and whether the Work is
// cancel-requested (the boundary then cancels the child's context).
type takeReply struct {
	Messages []string `json:",omitempty"`
	Cancel   bool     `json:",omitempty"`
}
