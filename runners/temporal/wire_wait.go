package temporal

import (
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// Names of the activities, workflow, updates and queries of Work that
// waits (external jobs and approval): part of the wire format, as those
// in wire.go.
const (
	SubmitActivityName    = "agentwork.Submit"
	AwaitActivityName     = "agentwork.Await"
	CancelJobActivityName = "agentwork.CancelJob"
	ApprovalsWorkflowName = "agentwork.Approvals"

	updateApprove = "approve"
	updateDeny    = "deny"
	queryApproval = "approval"

	// The approvals index's updates and query (see approvalsWorkflow).
	updateApprovalAdd    = "approval-add"
	updateApprovalRemove = "approval-remove"
	queryApprovals       = "approvals"
)

// jobInput makes a Work workflow run an external job: the coordinator's
// declaration (Spec.Job) with its defaults applied drives the waits.
type jobInput struct {
	Backoff       work.Backoff // defaults applied (driver.ResolveJob)
	MaxPollErrors int          // default applied
	PollQueue     string       // the target's poll queue (see pollQueue)
	PollsPerRun   int          // polls before the workflow continues as new
}

// jobState is a waiting job's state, carried across continue-as-new in
// workInput.Cont: the handle, the backoff, the error count, the deadline
// (Started + MaxDuration) and what the owner's registry was told.
type jobState struct {
	Handle []byte
	driver.JobWait
	Polls    int           // polls so far, every run included
	State    observe.State // running or cancel-requested
	Attempt  int
	Started  time.Time
	Rev      int64
	Detached bool
}

// submitInput is the Submit activity's input.
type submitInput struct {
	ID, Owner   string
	Depth       int
	Label       string
	Input       string
	MaxDuration time.Duration
}

// submitOutcome is a submit's result: the handle, or a class (never
// failure text).
type submitOutcome struct {
	Handle []byte `json:",omitempty"`
	Class  string `json:",omitempty"`
}

// awaitInput is the Await and CancelJob activities' input.
type awaitInput struct {
	Label  string
	Handle []byte
}

// pollOutcome is one poll's result (driver.Await). Err reports a
// transient poll error (the Go error of Await): its text never leaves the
// worker.
type pollOutcome struct {
	State    work.PollState
	Output   string `json:",omitempty"`
	Class    string `json:",omitempty"`
	Progress bool   `json:",omitempty"`
	Err      bool   `json:",omitempty"`
}

// approvalInfo answers the approval query: a Work awaiting approval as
// its approver may read it (Found false when it does not await approval
// or is not visible to the asker).
type approvalInfo = driver.ApprovalInfo

// approvalEntry is one Work in the approvals index. Label, the Work's
// target label, is absent from the entries of older versions.
type approvalEntry = driver.ApprovalEntry

// approvalsState is the approvals index's state, carried across
// continue-as-new.
type approvalsState struct {
	Entries []approvalEntry
}

// pollQueue is the task queue of a job target's polls and cancels: a
// queue of its own, so that each Worker bounds them by the job's MaxPolls
// apart from the running slots.
func pollQueue(base, label string) string { return base + ":poll." + label }

func approvalsWorkflowID(base string) string { return "agentwork-approvals/" + base }
