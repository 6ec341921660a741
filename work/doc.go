// Package work is the agentwork engine: a process-local Supervisor that runs
// background Work for owners (agent instances) and keeps each Work's
// lifecycle, result, guidance mailbox and limits.
//
// The engine knows nothing of langchaingo, OpenTelemetry or JSON tool
// plumbing; it imports only the standard library. Everything it holds is
// process-local: process exit loses it.
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
// across owners. Agent trees delegate and wait: a child that waits in
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
//   - A waiter returns only once its Work has a slot again: at once if its
//     lent slot is idle; else when the borrower ends, or when a pool slot
//     frees first (waiters get free pool slots ahead of queued Work; the
//     borrower then keeps the lent slot). A waiter whose context ends (the
//     child is being cancelled, closed or timed out) returns at once and
//     takes a pool slot even over the limit; nothing new is dispatched
//     until the pool is below the limit again.
//
// So a Work that lends does not execute, each slot has at most one
// executing Work at the end of its chain of borrowers, and the number of
// executing children never exceeds MaxRunning (except, briefly, by waiters
// whose context has ended). Every descendant an ancestor waits on gets to
// run: the slot chain always ends in a Work that executes or in an idle
// slot its subtree may use, and nesting is bounded by the depth limit. A
// Work counts as waiting while any of its goroutines waits in Result; a
// child that waits on one goroutine while it works on another is counted
// as waiting.
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
// stores nothing and fails with a stable Error code.
//
// # Progress, notices, launch identities, shutdown
//
// A running child reports progress as counts only (ReportProgress,
// Execution.CountModelRequest, Execution.CountToolCall): lock-free, never
// blocking, allocation-free; Status.Progress and LiveWork.Progress show the
// counts and the Observer gets at most one EventProgress per
// ProgressInterval per Work, never after its terminal event.
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
// # Content
//
// Child output, failure text and guidance text are held only where the
// contract needs them (a completed Work's output until it is evicted, queued
// guidance until the child drains it) and never reach an Observer, a Status,
// a Row or an error message. Failures are visible only as a state and a
// low-cardinality error class.
package work
