package observe

import "time"

// Progress is a Work's progress as counts only: never text, so that no
// content can travel through it. Function children set Done and Total with
// work.ReportProgress; agent children count ModelRequests and ToolCalls (the
// langchaingo adapter does it at each model request and tool call). All
// are zero until reported.
//
// Progress is visible to the application (work.Status.Progress) and to
// telemetry (EventProgress); it is not part of the model-facing JSON.
type Progress struct {
	Done          int64 // units of work done, as the child reported
	Total         int64 // units of work in all, as the child reported; 0 when unknown
	ModelRequests int64 // model requests the child has made so far
	ToolCalls     int64 // tool calls the child has made so far
}

// Usage is what one child run spent, as counts only. InputTokens and
// OutputTokens sum the usage the provider reported; UnknownUsage counts the
// model responses that reported none (their tokens are not in the sums, and
// the run's token reservation stays charged in full).
type Usage struct {
	Turns        int
	ToolCalls    int
	InputTokens  int64
	OutputTokens int64
	UnknownUsage int
}

// Tokens returns InputTokens + OutputTokens.
func (u Usage) Tokens() int64 { return u.InputTokens + u.OutputTokens }

// Row is one line of an owner's status block (work/boundary's Rows): id,
// target label, state, elapsed time and result availability, nothing
// else.
type Row struct {
	ID              string
	TargetLabel     string
	State           State
	Elapsed         time.Duration
	ResultAvailable bool
}

// The budget names: which budget ran out, as Event.Budget,
// work.Status.BudgetExhausted and work/boundary's Turn say (telemetry's
// agentwork.work.budget).
const (
	BudgetTurns     = "turns"
	BudgetToolCalls = "tool_calls"
	BudgetTokens    = "tokens"
	BudgetDuration  = "duration"
)

// The refusal reasons of an update a child reports (work.ReportUpdate):
// the ErrorClass of EventUpdate ("" is an accepted update), the outcome
// telemetry counts, and the Class of the work.ErrUpdateRefused it
// returns.
const (
	UpdateRefusedNotDeclared = "not_declared" // the Work's Spec declares no updates
	UpdateRefusedCount       = "count"        // over work.UpdatePolicy.MaxUpdates
	UpdateRefusedBytes       = "bytes"        // over work.UpdatePolicy.MaxBytes
	UpdateRefusedEnding      = "ending"       // the Work is cancel-requested or settling
	UpdateRefusedConflict    = "conflict"     // its key was accepted with another payload
	UpdateRefusedInvalid     = "invalid"      // an empty key or a payload that is not JSON
	// UpdateRefusedUnavailable: a durable engine could not reach the
	// Work's record; nothing was accepted and the child may retry with
	// the same key.
	UpdateRefusedUnavailable = "unavailable"
)
