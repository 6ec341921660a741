package observe

import (
	"context"
	"time"
)

// Limit names: the limits a start can be refused by, as they appear in
// work.ErrLimit's message and as EventRefused's ErrorClass.
const (
	LimitOutstanding = "outstanding" // work.WithMaxOutstanding
	LimitStarts      = "starts"      // work.WithMaxStarts
	LimitDepth       = "depth"       // work.WithMaxDepth
)

// EventType names one lifecycle event of a Work.
type EventType string

// The lifecycle events. The first six are state transitions (Event.To says
// which); the rest leave the state unchanged.
const (
	EventQueued            EventType = "queued"
	EventRunning           EventType = "running"
	EventCancelRequested   EventType = "cancel-requested"
	EventCompleted         EventType = "completed"
	EventFailed            EventType = "failed"
	EventCancelled         EventType = "cancelled"
	EventDetached          EventType = "detached"
	EventGuidanceAccepted  EventType = "guidance-accepted"
	EventGuidanceDelivered EventType = "guidance-delivered"
	EventGuidanceDropped   EventType = "guidance-dropped"
	EventResultRead        EventType = "result-read"
	// EventRefused reports a refused start: it has no WorkID, ErrorClass is
	// the reason ("closed" or a Limit name: LimitOutstanding, LimitStarts,
	// LimitDepth), and its context is the caller's.
	EventRefused EventType = "refused"
	// EventStatusBlock reports one rendered boundary status block: it has
	// no WorkID, Count is the number of rows, and its context is the
	// caller's. The middleware emits it.
	EventStatusBlock EventType = "status-block"
	// EventProgress reports a Work's progress counts (Event.Progress), at
	// most once a second per Work, from the reporting child's
	// goroutine. It is never delivered after the Work's terminal event.
	EventProgress EventType = "progress"
	// EventOrphaned reports a Work that Shutdown abandoned: its child had
	// not returned a grace period after it was cancelled. It is delivered
	// once per abandoned Work (visible or detached), in the context Bind
	// returned for it, with its WorkID, Owner, Target and Kind; From is the
	// state it was left in and ErrorClass is work.ClassOrphaned. It is the last
	// event an Observer can count on (telemetry ends the Work's span on
	// it): the terminal event follows only if the child ever returns.
	// Foreground calls left running are counted in the report only.
	EventOrphaned EventType = "orphaned"
	// EventBudgetExhausted reports that a child's budget ran out: Budget
	// names it (turns, tool_calls, tokens or duration). For a foreground
	// call WorkID is empty and the context is the call's execution.
	EventBudgetExhausted EventType = "budget-exhausted"
	// EventUsage reports what a child run spent (Usage), once, as it ends:
	// before the terminal event of a background Work, at the end of a
	// foreground call (WorkID empty, the call's execution context).
	EventUsage EventType = "usage"
	// EventWaiting reports that an external job was submitted and now
	// waits (the Work stays running; it gives back its running slot).
	EventWaiting EventType = "waiting"
	// EventPolled reports one poll of an external job: Poll is its
	// outcome (PollOutcome*). It is delivered before the terminal event a
	// poll ends the Work with.
	EventPolled EventType = "polled"
	// EventApprovalRequested reports that a Work awaits approval (it
	// follows EventQueued).
	EventApprovalRequested EventType = "approval-requested"
	// EventApproved reports that a Work's approval was given: it joins
	// the dispatch queue.
	EventApproved EventType = "approved"
	// EventDenied reports that a Work's approval was denied; EventCancelled
	// (work.ClassDenied) follows.
	EventDenied EventType = "denied"
	// EventUpdate reports one update a child reported: accepted
	// (ErrorClass "", Seq its sequence number, Bytes its encoded size) or
	// refused (ErrorClass an UpdateRefused* reason). Question marks a
	// question. Never its value.
	EventUpdate EventType = "update"
	// EventBackgrounded reports that a child call made without
	// run_in_background, admitted as Work and awaited up to a bound (the
	// middleware's auto-background option), was still unfinished at the
	// bound and returned the Work's ref: the Work goes on in the
	// background. From is the state it moved in (queued or running),
	// Duration the bound. Its context is the call's (what Observer.Begin
	// returned for it, with ToolCall.AutoBackground set). The middleware emits
	// it.
	EventBackgrounded EventType = "backgrounded"
	// EventForeground is never delivered to Event: it is the type of the
	// Event passed to Bind for a foreground call (WorkID empty).
	EventForeground EventType = "foreground"
)

// Event is a content-free record of one lifecycle event. It has no field
// that could carry output, prompts, guidance or error text.
//
// ErrorClass is a low-cardinality class, never error text: on EventFailed
// the failure's work.Class* constant and on EventCancelled work.ClassCancelled, or
// work.ClassDenied or work.ClassApprovalTimeout for a Work that never got its
// approval (both the Work's work.Status.Class, recorded once as it settles); on
// EventOrphaned work.ClassOrphaned; on EventRefused the refusal reason; ""
// otherwise.
type Event struct {
	Type       EventType
	WorkID     string
	Owner      string // the owner's id
	Depth      int    // the owner's nesting depth (0 for a top-level owner)
	Target     string // the target label
	Kind       Kind
	From, To   State // for transitions; both empty otherwise
	Time       time.Time
	QueueWait  time.Duration // set on EventRunning: queued (created, or approved) -> started
	Duration   time.Duration // set on terminal events: started (or created) -> finished
	Bytes      int           // output size in bytes, set on EventCompleted and result_too_large failures
	ErrorClass string        // the class: see below
	Count      int           // guidance messages, on guidance events
	Progress   Progress      // set on EventProgress
	Budget     string        // set on EventBudgetExhausted: which budget ran out
	Usage      Usage         // set on EventUsage
	Poll       string        // set on EventPolled: PollOutcome*
	Seq        int           // set on EventUpdate: the update's sequence number
	Question   bool          // set on EventUpdate: the update is a question
}

// ToolCallKind says what a model-facing call is.
type ToolCallKind uint8

const (
	// ToolCallLaunch is a backgroundable child called with run_in_background.
	ToolCallLaunch ToolCallKind = iota + 1
	// ToolCallForeground is a child called in the foreground.
	ToolCallForeground
	// ToolCallAction is one action of the work tool.
	ToolCallAction
)

// ToolCall describes one model-facing tool call as it begins.
type ToolCall struct {
	Kind   ToolCallKind
	Tool   string // the tool's label ("work" for actions)
	Action string // the work tool's action, for ToolCallAction
	WorkID string // the work id the action names, when it has one
	CallID string // the model's tool-call identity, when known
	Owner  string
	// AutoBackground is set on a ToolCallLaunch made without
	// run_in_background that waits up to this bound for the Work's output
	// and, if the Work is still unfinished then, returns its ref
	// (EventBackgrounded); 0 for every other call.
	AutoBackground time.Duration
}

// ToolCallEnd describes how a call ended.
type ToolCallEnd struct {
	WorkID     string // the launched work's id, for a ToolCallLaunch that admitted Work
	Outcome    string // ok, not_found, rejected, invalid, timeout, or failed
	ErrorClass string // a stable error code or class; empty when Outcome is ok
}

// Observer receives every lifecycle event and every model-facing call. It is
// the engine's only telemetry seam. Implementations must be safe for
// concurrent use, must not block, and must not call back into the
// engine. Events of one Work arrive in order.
type Observer interface {
	// Begin is called as a model-facing call starts, with the caller's
	// context. It returns the context the call continues in (for example
	// one carrying a span) and a function that must be called once when the
	// call ends.
	Begin(ctx context.Context, c ToolCall) (context.Context, func(ToolCallEnd))
	// Bind is called once for each accepted Work, on the starting
	// goroutine, before EventQueued, without the engine's lock.
	// caller is the starting context; exec is a fresh context derived from
	// context.Background that the child will run in. Bind returns exec or
	// a context derived from exec (for example one carrying the execution
	// span); it must not copy any other value of caller into it.
	Bind(caller, exec context.Context, e Event) context.Context
	// Event is called for each lifecycle event with the context Bind
	// returned for that Work.
	Event(ctx context.Context, e Event)
}

// Replayer is implemented by an Observer that can rebuild a Work's span
// from events already reported in another process. A work.Engine that runs a
// Work's lifecycle in code replayed from a durable history (a workflow
// that a durable runner rebuilds in a new process) calls Bind again for
// the Work and then Replay, not Event, for each event it rebuilds: Replay
// records e on the span in ctx only, with its original time, and never a
// metric or a log line, so that those count each event once while the
// span, which lived in the lost process, is still exported whole. An
// Observer that does not implement it gets nothing for replayed events.
type Replayer interface {
	Replay(ctx context.Context, e Event)
}

// Watcher is implemented by an Observer that reads an engine's live
// counts when it collects (for gauges and status pages), through the
// small Watched interface, so that it watches any engine. An engine calls
// Watch once with itself (work.New does); its Close calls the returned
// function.
type Watcher interface {
	Watch(w Watched) (unwatch func())
}

// NopObserver ignores everything.
type NopObserver struct{}

// Begin returns ctx and a no-op end function.
func (NopObserver) Begin(ctx context.Context, _ ToolCall) (context.Context, func(ToolCallEnd)) {
	return ctx, func(ToolCallEnd) {}
}

// Bind returns exec.
func (NopObserver) Bind(_, exec context.Context, _ Event) context.Context { return exec }

// Event does nothing.
func (NopObserver) Event(context.Context, Event) {}

// The outcomes of a poll, as Event.Poll reports them (and telemetry counts
// them).
const (
	PollOutcomeWaiting = "waiting"
	PollOutcomeDone    = "done"
	PollOutcomeFailed  = "failed"
	PollOutcomeError   = "error"
)
