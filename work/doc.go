// Package work is the agentwork engine: a process-local Supervisor that runs
// background Work for owners (agent instances) and keeps each Work's
// lifecycle, result, guidance mailbox and limits.
//
// The engine knows nothing of langchaingo or OpenTelemetry; it imports only
// the standard library. It defines the canonical JSON encoding of its
// values (the crux shapes: Ref, Status and the Cancel, Send and Detach
// receipts marshal to what the model sees), because the encoding is a
// property of the value: a Ref is the same value to a Go caller and to the
// model, and durable engines and applications store and log it. The
// middleware owns the rest of the work tool: its input parsing, its error
// objects and its protocol. Everything the Supervisor holds is
// process-local: process exit loses it.
//
// # Words
//
// A target is a child as the engine knows it (Target: its label, id and
// kind). Its label is its name: the tool name the model calls it by, the
// key of the tool map, the adapter's child name, and what every
// target-valued string in this package holds (Status.TargetLabel,
// Row.TargetLabel, and the Target fields of Event, Notice, LiveWork,
// TargetCount and TargetCounts), as telemetry's agentwork.work.target
// attribute and target label do. Its id (Target.ID, Ref.TargetID, the
// model-facing targetId) defaults to the label.
//
// # Lifecycle
//
// A Work is created queued, becomes running when a running slot is free,
// and ends in exactly one terminal state:
//
//	queued           -> running | cancelled
//	running          -> completed | failed | cancel-requested
//	cancel-requested -> completed | failed | cancelled
//
// Terminal states (completed, failed, cancelled) are final. Every state change
// goes through one transition function that refuses any other edge.
//
// # Owners, scopes and detached Work
//
// A running child's own scope (Execution.Scope) owns the Work the child
// starts. All of it, visible or detached, is cancelled when the child
// returns; Release cancels all of an owner's Work, and Close all Work.
// Detach only hides a Work from its owner's model-facing views (List,
// Status, Result, Cancel, Detach, Send, Rows): until it is terminal it
// still counts against the owner's outstanding limit and is cancelled with
// the owner's other Work, and the Observer sees its events to the end.
//
// # Running slots
//
// At most MaxRunning children execute at once across all owners; queued
// Work takes a free slot in FIFO order within an owner and round-robin
// across owners. An external job (see "External jobs") holds a slot only
// while its Submit runs: waiting for its result it holds none, and
// Snapshot.SlotsInUse does not count it. Agent trees delegate and wait: a child that waits in
// Result on Work of its own scope would hold its slot while its
// descendants queue behind it, and a few such waits fill the pool and stall
// everything. So a waiting child lends its slot to its own subtree for the
// wait:
//
//   - As a Result of a child's scope starts waiting, the Work whose slot the
//     waiting code runs on (the child's own Work, or the nearest enclosing
//     one for a foreground call) lends its slot. If the awaited Work runs
//     on a pool slot of its own, it moves onto the lent slot and its pool
//     slot goes back to the pool (so the pool stays fully used); otherwise
//     the first queued Work of the lender's subtree runs on the lent slot,
//     and Work queued later in that subtree may take it while it is idle.
//     A lent slot is never used outside the lender's subtree, so lending
//     does not change the order in which other owners' Work runs. A
//     borrower may lend the slot further down while it waits in turn.
//   - The slot stays lent while any waiter of that Work waits (each waiter
//     counts, so a child that waits on several goroutines lends until the
//     last of them stops). A waiter returns at its timeout or ctx end
//     regardless of the slot, as Result promises.
//   - When the last waiter stops while a borrower still runs on the lent
//     slot, the Work has no slot and is owed one. A free pool slot goes
//     to it at once (owed Works get free pool slots ahead of queued Work;
//     the borrower then keeps the lent slot). Otherwise, if code on its
//     slot has used the model-request boundary (Execution.BeginRequest,
//     as an agent child's adapter does), the Work reclaims a slot there:
//     its next BeginRequest blocks until the borrower ends, a pool slot
//     frees, or a new waiter lends the slot again; if the child's context
//     ends first, BeginRequest returns and the Work takes a pool slot even
//     over the limit. A Work whose code has not used the boundary (a
//     function child, or an agent whose adapter does not call it) takes a
//     pool slot at once, even over the limit. While the pool is over the
//     limit nothing new is dispatched until it is below the limit again.
//
// So a Work that lends or is owed a slot holds none, each slot has at most
// one executing Work at the end of its chain of borrowers, and the number
// of children executing outside those two states never exceeds MaxRunning
// except, transiently, by Works that took a pool slot over the limit (no
// boundary, or a context that ended at it). Two looser cases remain: a
// child that works on one goroutine while another waits in Result counts
// as waiting, and an agent child owed a slot executes without one from
// the end of its wait to its next model request. Every descendant an
// ancestor waits on gets to run: the slot chain always ends in a Work that
// executes or in an idle slot its subtree may use, and nesting is bounded
// by the depth limit.
//
// # External jobs
//
// A Spec with a Job is a job at another service: a submit step and an
// await step (Job.Submit, Job.Await), and optionally a cancel step
// (Job.Cancel). Its Work is queued and dispatched like any Work; Submit
// runs on its running slot with the Work's id as its idempotency key and
// the Spec's Input, and returns the job's handle, bytes the Supervisor
// keeps in the Work's record (nothing else of Submit survives, no closure).
// Then the Work waits: EventWaiting, its slot goes back to the pool (the
// next queued Work runs), its state stays running (the model sees
// running) and Status.Waiting, LiveWork.Waiting, Snapshot.Waiting and
// TargetCounts.Waiting say so. Between polls it holds no goroutine and no
// slot: a waiting job is an entry in a heap that one Clock timer serves.
// A due poll runs Await on a goroutine of its own, under its target
// label's poll bound (Job.MaxPolls at once, default DefaultMaxPolls); a
// poll due while the bound is full waits in the bound's FIFO list, not on
// a goroutine. Each poll is reported as EventPolled with its outcome
// (Event.Poll). The delays follow Job.Backoff (1 s doubling to 30 s by
// default, back to the first delay after a poll that reports
// Poll.Progress). A poll that answers PollDone completes the Work with
// Poll.Output (the result-byte limit applies: over it the Work fails with
// result_too_large); PollFailed fails it with Poll.Class (ClassError when
// empty or when it is not a class name: 1 to 32 bytes of a-z, 0-9 and
// '_', starting with a letter; at most 64 such classes per process); a Go
// error from Await is transient (outcome "error") and MaxPollErrors of
// them in a row fail the Work with ClassError. A Submit that fails fails
// the Work (ClassError); a panic in Submit or Await fails it with
// ClassPanic. A Work that fails this way is not cancelled at the service.
//
// What cancel does to the job: Cancel (and Release, the end of the
// owner's scope, Close and Shutdown's cancellation) makes a job's Work
// cancel-requested, stops its wait at once (it leaves the timers' heap or
// the poll FIFO; a poll or Submit in progress sees its context cancelled)
// and, when the job was submitted and Job.Cancel is set, calls Job.Cancel
// once with the handle (also when Submit returned a handle after the
// cancel), then the Work is cancelled. A poll in progress that answers
// done still completes it, and one that answers failed still fails it.
// Without Job.Cancel, cancelling stops the wait, not the job: the service
// goes on with it. A job that waits past its maximum duration
// (Budget.MaxDuration, WithDefaultBudget's; from when it started running)
// is stopped the same way and fails with ClassDeadline. Shutdown lets
// waiting jobs poll on while its context allows, as it does running
// Work, then cancels them as Close does (Job.Cancel once each); Close
// waits for those Cancel calls as it waits for children. A foreground
// Call of a job submits it and polls it on the call's own goroutine
// (key: the call's scope id), not under the poll bound, and calls
// Job.Cancel when the call's context ends first; a failed poll is
// ErrChildFailed with ClassError.
//
// Idempotency: a launch retried with the same CallID reuses the Work, so
// the job is submitted once per Work. The key handed to Submit is the
// Work's id: stable, so a service that honours idempotency keys makes a
// repeated Submit harmless. The in-process Supervisor never repeats one;
// a durable engine may (it retries a submit whose worker died), and that
// is safe only when the service honours the key. Everything the Supervisor
// holds is process-local: a process exit loses the wait (the job goes on
// at the service). The handle, the input and the output are content: they
// never reach an Observer, a Status or a Row.
//
// # Bounds
//
// Everything a Work keeps is bounded: its output (WithMaxResultBytes), its
// undelivered guidance by count and bytes and each message's size
// (WithGuidanceQueue, WithMaxMessageBytes), and its idempotency records
// (WithCommandRecords; none once the Work is detached, evicted, or its
// terminal answer was read). Terminal Work an owner keeps readable is
// bounded by WithRetention, which evicts results already read first, then
// failed and cancelled Work, and unread results last. A refused request
// stores nothing and fails with a stable Error code. Every limit option
// gives 0 and negative values one meaning, on every engine (the durable
// runners' options of the same names are these): 0 is the documented
// default, or no limit where the option says so (WithMaxStarts,
// WithMaxResultBytes, WithRetention's age); a negative value is
// ErrInvalidLimit from every Start, Call and SetPool (ResolveLimits).
//
// # Progress, notices, launch identities, shutdown
//
// A running child reports progress as counts only (ReportProgress,
// Execution.CountModelRequest, Execution.CountToolCall): lock-free, never
// blocking, allocation-free; Status.Progress and LiveWork.Progress show the
// counts and the Observer gets at most one EventProgress per
// second per Work, never after its terminal event.
//
// Subscribe gives an owner content-free completion Notices through a
// bounded buffer that drops (and counts) rather than wait; the channel
// closes on Release, Close and Shutdown. A reader that must not miss a
// settlement treats a Notice as a wake-up and reads List or Status.
//
// A Spec with a CallID (the model's tool-call identity) and an
// InputDigest makes Start idempotent per owner: a repeat returns the same
// Ref and starts nothing; the same CallID with another target or digest is
// ErrConflict. Only digests are kept, at most MaxLaunchRecords per owner.
//
// Shutdown refuses new starts, lets live Work finish while its context
// allows, then does what Close does, waits the shutdown grace
// (WithShutdownGrace) and returns a content-free ShutdownReport: the Works
// it waited for by target and final state, and the orphans whose children
// ignored cancellation (each also reported as EventOrphaned). Close is the
// immediate variant.
//
// # Approval
//
// A Spec with NeedsApproval is admitted by Start like any other (its Ref
// at once; it counts against the owner's outstanding limit and reserves
// its pool budget) and is then held: queued (Status.AwaitingApproval; the
// JSON says queued), out of the dispatch queue, so it blocks no Work
// queued after it, holds no running slot and is neither in
// Snapshot.Queued nor in the queue age (LiveWork.Enqueued is zero). Its
// events are EventQueued then EventApprovalRequested, and the owner's
// Subscriptions get a content-free NoticeApproval. The application reads
// the request (target, input, launching owner, deadline) with Pending and
// answers it with Approve or Deny, as the Work's owner or as Approver(),
// the role that sees and answers every owner's requests:
//
//	approved:  EventApproved, then the tail of the owner's queue; its queue
//	           age (LiveWork.Enqueued, Event.QueueWait) counts from now
//	denied:    EventDenied, then cancelled with Status.Class ClassDenied
//	no answer: within ApprovalTimeout (DefaultApprovalTimeout, 24 h), by
//	           the Supervisor's Clock: cancelled, ClassApprovalTimeout
//
// Cancel, Release (and the end of a child's scope) and Close cancel a held
// Work (ClassCancelled); Shutdown waits for it like other queued Work.
// The timeout is one Clock.AfterFunc timer, stopped by whichever comes
// first: no goroutine waits for an answer. An answer counts once: a Work
// that is unknown, another owner's, detached (for its owner; the approver
// still sees it), or not awaiting approval is ErrNotFound. A foreground
// Call cannot wait for approval (ApprovalCallRefusal, ErrInvalidSpec).
// The input reaches Pending only, never an event, a Status or an error.
//
// # Updates and questions
//
// A Spec with Updates (an UpdatePolicy) declares that its child reports
// intermediate updates: ReportUpdate (or Execution.ReportUpdate) with an
// idempotency key (an agent child's tool-call id) and a JSON value, at
// most MaxUpdates (DefaultMaxUpdates, 32) and MaxBytes of values
// (DefaultMaxUpdateBytes, 16 KiB) per Work, each setting capped
// (MaxUpdatesCeiling, MaxUpdateBytesCeiling; negative or over the ceiling
// is ErrInvalidSpec). UpdateLog decides each update, in this order:
// not_declared, invalid (empty key, not JSON), a repeat of an accepted
// key (the same value returns the first receipt with Duplicate set; any
// other value is conflict), ending (the Work is cancel-requested or
// settling), count, bytes. A refusal is ErrUpdateRefused with the reason
// as Class (UpdateRefusal; DecodeError keeps it) and stores nothing: an
// update is refused before it is accepted, never dropped after.
//
// Accepted updates are numbered 1, 2, ... in acceptance order. The
// application reads them with Updates (by cursor: Seq > after),
// owner-checked like Status, also after the Work has ended, until its
// record is evicted; the Supervisor implements Updater. Each decided
// update is an EventUpdate (its size, sequence number and refusal reason,
// never its value; a duplicate is none), and each accepted one a
// NoticeUpdate to the owner's Subscriptions (Notice.Seq, Notice.Bytes),
// which never pushes a settlement out of a full buffer (the settlement
// takes the place of the oldest notice of another kind). A foreground
// Call has no Work to read updates from: its updates are refused with
// not_declared.
//
// A question is an update with question set. Its answer is guidance:
// Send or Answer (Answer also reaches a function child, which Send
// refuses), accepted after the question. An agent child's next
// BeginRequest waits until the answer arrives, then returns, and the
// adapter's Guidance delivers it as ordinary guidance (call Guidance after
// BeginRequest); guidance queued before the question is delivered with
// it but does not answer it. A function child waits with AwaitAnswer. The
// wait is bounded by the question's timeout (QuestionTimeout,
// DefaultQuestionTimeout, 10 min, counted from the question's acceptance
// on the Supervisor's Clock: one AfterFunc timer, stopped by the answer
// or the Work's end), the Work's deadline and its context (Cancel, Close):
// it ends at once with any of them. A question that times out is reported
// once by Execution.Unanswered (the adapter frames a "no answer" note into
// the next request) or as ErrUnanswered by AwaitAnswer. One question is
// open at a time: a question asked while one is open joins its wait (the
// first question's timeout holds) and one answer answers both. The wait
// holds the child's running slot: a child waiting for an answer counts
// as running and blocks the Work queued behind it.
//
// Update state is one allocation per Work that declares updates; a Work
// that does not carries only a nil pointer. Under another Engine
// (WithRemote) Remote.Update decides (its UpdateLog as workflow state)
// and Remote.AwaitAnswer is the wait.
//
// # For engine implementations
//
// An Engine other than the Supervisor (a durable runner such as the
// Temporal one) uses the contract logic of contract.go instead of writing
// it again: Spec.Validate, Budget.Validate and ValidateOwner (what every
// engine refuses),
// Order (List's and Rows' orders) and Elapsed, Budget.Dims with
// PoolReserve and PoolCharge (a pool's reservation and settlement, the
// unknown-usage rule included), DecodeError (the errors by code, across a
// process boundary), ErrUnavailable with
// Error.Wrap (a transport or server failure, its cause reachable),
// LaunchConflict, LimitRefusal, PoolRefusal and PoolScopeRefusal (the
// refusals' messages), UpdateLog and UpdateRefusal (the decision on each
// update, deterministic for a workflow; UpdateLog.State and
// RestoreUpdateLog carry it as plain data).
// Gauges and status pages watch an engine through Watched (Snapshot).
//
// # Content
//
// Child output, failure text, guidance text and update values are held
// only where the contract needs them (a completed Work's output until it
// is evicted, queued guidance until the child drains it, accepted updates
// until the Work is evicted) and never reach an Observer, a Status,
// a Row or an error message. Failures are visible only as a state and a
// low-cardinality error class.
package work
