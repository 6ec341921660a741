package temporal

import (
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// Names of the workflows, activity, updates, signals and queries: they are
// part of the runner's wire format and must not change between the
// coordinators and workers of one deployment.
const (
	WorkWorkflowName  = "agentwork.Work"
	OwnerWorkflowName = "agentwork.Owner"
	RunActivityName   = "agentwork.Run"

	updateAdmit   = "admit"
	updateRelease = "release"
	updateStarted = "started"
	updateCancel  = "cancel"
	updateDetach  = "detach"
	updateSend    = "send"
	updateDrain   = "drain"
	updateAck     = "ack"
	updatePool    = "pool"
	// The registry's inputs from Work workflows, workers and coordinators
	// are updates: an update's workflow task is handed to the worker at
	// once, while a signal's waits in the server's task queue and holds up
	// an admission that arrives meanwhile.
	updateRecord   = "record"    // a Work's transition record
	updateRead     = "mark-read" // a Work's result was read
	updateDetached = "detached"  // a Work was detached
	updateForget   = "forget"    // a Work whose workflow did not start

	signalRelease = "release-cancel"

	queryRecords = "records"
	queryCommand = "command"

	errTypePrefix = "agentwork:"
)

// classNotRun is the outcome class of an attempt that did not run (the
// Work ended before it): no failure.
const classNotRun = "not_run"

// workInput starts one Work workflow. It holds the child's input: the
// child's run needs it on the worker.
type workInput struct {
	ID, Owner        string
	Depth            int
	Label, TargetID  string
	Kind             observe.Kind
	Input            string
	TaskQueue        string // the target's activity queue
	OwnerWorkflow    string
	MaxDuration      time.Duration
	MaxResultBytes   int
	MaxAttempts      int // 1 unless the child is retryable
	HeartbeatTimeout time.Duration
	Created          time.Time
	Mailbox          driver.MailboxLimits
	Launch           launchInfo
	Budget           work.Budget // effective: defaults and ceiling applied
	FailOnBudget     bool
	// Work that waits (wire_wait.go): an external job, an approval before
	// anything is scheduled, and a job's state in a continued run.
	Job      *jobInput             `json:",omitempty"`
	Approval *driver.ApprovalInput `json:",omitempty"`
	Cont     *jobState             `json:",omitempty"`
	// Children that talk back (wire_updates.go): the Spec's update policy
	// (defaults applied; nil: none declared), and a continued run's
	// updates.
	Updates *work.UpdatePolicy `json:",omitempty"`
	Carry   *updateCarry       `json:",omitempty"`
}

// runInput is the activity's input.
type runInput struct {
	ID, Owner      string
	Depth          int
	Label          string
	Kind           observe.Kind
	Input          string
	MaxDuration    time.Duration
	MaxResultBytes int
	Budget         work.Budget
	FailOnBudget   bool
	Updates        bool `json:",omitempty"` // the Spec declares updates
}

// runOutcome is an attempt's result: the output, or a class. Failure text
// never leaves the worker.
type runOutcome struct {
	Output   string
	Class    string
	Bytes    int              `json:",omitempty"` // the output's size, for a result_too_large failure
	Usage    observe.Usage    // what the attempt spent
	Budget   string           `json:",omitempty"` // the budget that ran out, if one did
	Progress observe.Progress // the child's progress counts when it returned
}

// workOutcome is the Work workflow's result.
type workOutcome struct {
	State  observe.State
	Output string
	Class  string
	Bytes  int `json:",omitempty"` // the output's size, for a result_too_large failure
	// Final is the last record the Work sent to its owner's registry (the
	// registry has it before the workflow closes): a coordinator awaiting
	// the result needs not read the registry again. Its Detached says that
	// the owner detached or released the Work before it ended (the
	// registry keeps its own Detached; take leaves it).
	Final *ownerRecord `json:",omitempty"`
}

// sendRequest queues one guidance message: the text itself is in its
// holder workflow (Ref), never in the Work's history.
type sendRequest struct {
	Owner   string
	Command string // SHA-256 of the command id, hex; "" is never deduplicated
	Digest  string // SHA-256 of the text, hex
	Ref     string // the id of the message's holder workflow
	Bytes   int    // the text's size, for the mailbox limit
	Answer  bool   `json:",omitempty"` // Engine.Answer: a function child's guidance too
}

// sendReply is an accepted message's receipt; its Ref is the holder of
// the message's text.
type sendReply = driver.Receipt

// guidanceRef is one queued message: its holder and size.
type guidanceRef struct {
	Ref   string
	Bytes int
}

// ownerRecord is what the owner's registry keeps of one Work (driver.Record).
type ownerRecord = driver.Record

// admitRequest asks the owner's registry to admit one Work
// (driver.Admission).
type admitRequest = driver.Admission

// admitReply is an admitted start's sequence number and the budget it
// runs with (its pool applied).
type admitReply struct {
	Seq    int64
	Budget [3]int64
	// Replay: the launch identity was used before, with the same target
	// and input: nothing was admitted; ID and TargetID are its Work's.
	Replay       bool
	ID, TargetID string
}

// ownerState is the Owner workflow's state, carried across
// continue-as-new: its owner and its registry (driver.Registry, whose
// fields stand at the top of the state's JSON, as before it was shared).
type ownerState struct {
	Owner string
	driver.Registry
	// Unconfirmed are the Works admitted whose workflow has not been
	// seen yet, with when to check that it started (workflow_admission.go);
	// Grace is how long after its admission (0: admissionGrace).
	Unconfirmed map[string]time.Time `json:",omitempty"`
	Grace       time.Duration        `json:",omitempty"`
}

// startedReply answers an attempt's started update: whether it may run,
// and what its worker tells the owner's registry (workflow Owner) first.
type startedReply struct {
	Run    bool
	Owner  string
	Record ownerRecord
}
