// Package temporal runs agentwork's background Work on Temporal: a
// work.Engine (Engine) for coordinator processes and a Worker for the
// processes that run children. The model-facing contract is the same as
// under the in-process work.Supervisor, except that a work.ref's
// guarantees say "durable" and a status's attempt counts real attempts.
//
// # Mapping
//
//   - One workflow per Work (agentwork.Work; its id is the Work id) with
//     the owner's id in the AgentworkOwner search attribute and the target
//     label in its memo. Its result is the child's output (capped, below
//     Temporal's payload limit).
//   - The child's run is an activity (agentwork.Run) on the queue
//     "<task queue>.<label>", which only Workers that registered that
//     target poll. It heartbeats periodically and at every model boundary;
//     cancellation arrives through the heartbeat and cancels the child's
//     context (cooperative, as in-process) within a third of the heartbeat
//     timeout; when a model boundary's heartbeat brings it, the context is
//     done before that boundary's request goes out. The heartbeats go on
//     until the child returns, so a cancelled child whose call in progress
//     outlasts the heartbeat timeout ends as it returns (cancelled, or
//     completed when the completion wins), not worker_lost.
//   - An attempt that dies with its worker (no heartbeat within the
//     heartbeat timeout) is not replayed: the Work fails with class
//     worker_lost, unless its child is declared retryable (WithRetryable),
//     in which case Temporal starts the next attempt and attempt counts it.
//   - Guidance: each message is the input of a holder workflow of its own
//     (agentwork.Guidance); an update queues its id (with the text's digest
//     and size, never the text) on the Work's workflow, where cursors and
//     idempotency records live. The child's boundary reads the ids
//     (update), the texts (a query on each holder) and marks them taken
//     (update); a holder deletes its own execution once it is taken,
//     dropped (the Work ended), refused or repeated.
//   - A Work's budget (Spec.Budget with the defaults and ceiling applied)
//     travels in its input; the worker counts it at the child's boundary
//     (work.Remote) and reports progress, budget and usage events to its
//     Observer. An owner's pool (Engine.SetPool) lives in its registry:
//     admission reserves from it, settlement refunds what was not spent.
//   - One registry workflow per owner (agentwork.Owner) holds the owner's
//     visible Work (list, status, status rows; retention by count and
//     age, WithRetention), enforces the outstanding and starts limits
//     atomically across every coordinator process (an update with start),
//     and releases. It continues as new as its history grows.
//
// Nothing here implements a queue, a timer, a retry or persistence: they
// are Temporal's.
//
// # Telemetry
//
// A Work's lifecycle events (queued, running, cancel-requested, the
// terminal one, detached, guidance accepted, delivered and dropped) are
// decided by its workflow and reported, with workflow time, to the
// Observer (WithObserver) of the Worker whose process runs the workflow
// task; the coordinator's Engine reports refused starts, result reads
// and the detach of ended Work. With the telemetry Observer on every
// process, a Work has one "invoke_agent {target}" span (a root linked to
// the launching span, whose trace context travels in the workflow's
// input) and the same metrics and log lines as in-process. When a workflow is rebuilt from its history in
// another process (its worker died, or evicted it from its cache), the
// Observer is bound again at the first event reported live there, and
// the replayed events before it go to its Replay method (work.Replayer):
// the span is rebuilt there with its original times and exported once,
// when the Work ends; metrics and logs are not counted again. A replay
// that reports nothing live (a query of a workflow the worker does not
// cache, a closed one included) rebuilds no span. Delivery is at least once: a workflow task whose worker dies
// after reporting and before completing reports again. The child's own
// spans nest under the SDK interceptor's RunActivity span when the client
// has the interceptor. A child's progress reaches the Worker's Observer
// (EventProgress) and its attempt's heartbeats: Status reads a running
// Work's counts from the last heartbeat (one more call to Temporal), and a
// settled Work keeps its last counts in its owner's registry (List has
// only those).
// The live gauges
// (Work by state, slots) count only the in-process foreground calls.
//
// # Content
//
// Failure text never leaves the worker (an attempt reports a class), and
// nothing here logs or traces content. The child's input and its output
// are payloads in the Work's history; a guidance message is a payload in
// its holder's history until the holder deletes itself (see Mapping). Use
// a payload codec on the client (client.Options.DataConverter) to encrypt
// them.
//
// The telemetry gauges and status page watch an engine through
// work.Watched (Snapshot); the Engine does not implement it yet: its live
// gauges await a Snapshot read from Temporal's visibility. Until then they
// cover its in-process foreground calls only.
package temporal
