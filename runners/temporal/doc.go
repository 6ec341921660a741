// Package temporal runs agentwork's background Work on Temporal: a
// work.Engine (Engine) for coordinator processes and a Worker for the
// processes that run children. The model-facing contract is the same as
// under the in-process work.Engine, except that a work.ref's
// guarantees say "durable" and a status's attempt counts real attempts.
//
//	c, err := client.Dial(client.Options{HostPort: "temporal:7233"})
//	// Worker processes register the children they can run:
//	w, err := temporal.NewWorker(c, map[string]temporal.Child{
//		"research": {Kind: work.KindAgent, Run: researcher.Run}}, temporal.WithOptions(work.WithObserver(obs)))
//	err = w.Start()
//	// Coordinator processes: the Engine replaces work.New().
//	eng := temporal.New(c, temporal.WithOptions(work.WithObserver(obs)))
//	kit, err := langchaingo.Prepare(ctx, eng, llm, tools, langchaingo.WithOwner("coordinator-1"))
//
// ExampleNewWorker and ExampleNew are both halves in full.
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
//   - An attempt whose worker lived but could not reach the server for
//     the heartbeat timeout (the server away, or the network cut) is not
//     cancelled by its Worker, which holds it; each heartbeat names the
//     Worker's own rejoin queue, and the Work's workflow, seeing the
//     heartbeat timeout, takes the attempt back from there with a Rejoin
//     activity within the rejoin window (twice the heartbeat timeout, at
//     least 30 s): the Work carries on, attempt unchanged. No Worker takes
//     it in the window: worker_lost, and the Worker later cancels the child
//     (class unreachable). See rejoin.go and docs/chaos-durable.md.
//   - A coordinator that dies between a Work's admission and its
//     workflow's start leaves a record its owner's registry checks once the
//     admission grace has passed (WithAdmissionGrace, default 5 minutes): a
//     Work whose workflow does not exist is forgotten, its outstanding slot
//     and pool reservation released.
//   - Guidance: each message is the input of a holder workflow of its own
//     (agentwork.Guidance); an update queues its id (with the text's digest
//     and size, never the text) on the Work's workflow, where cursors and
//     idempotency records live. The child's boundary first reads the
//     Work's history back to the last boundary (no billable action): with
//     no send accepted since, it takes nothing; otherwise it reads the ids
//     (update), the texts (a query on each holder) and marks them taken
//     (update), then deletes the taken holders' executions; a holder
//     deletes its own execution once it is dropped (the Work ended),
//     refused or repeated, or when its TTL runs out.
//   - A Work's budget (Spec.Budget with the defaults and ceiling applied)
//     travels in its input; the worker counts it at the child's boundary
//     (driver.Remote) and reports progress, budget and usage events to its
//     Observer. An owner's pool (Engine.SetPool) lives in its registry:
//     admission reserves from it, settlement refunds what was not spent.
//   - One registry workflow per owner (agentwork.Owner) holds the owner's
//     visible Work (list, status, status rows; retention by count and
//     age, work.WithRetention in WithOptions), enforces the outstanding and starts limits
//     atomically across every coordinator process (an update with start),
//     and releases. It continues as new as its history grows.
//
// # Work that waits
//
// An external job (a Child with a Job; the coordinator's Spec.Job says
// that a Work is one) submits in an activity (agentwork.Submit) holding
// one of its Worker's running slots, then waits on workflow timers
// between polls (agentwork.Await activities on the target's poll queue,
// at most Job.MaxPolls at once per Worker), continuing as new every
// WithPollsPerRun polls. A Work that needs approval (Spec.NeedsApproval)
// is a workflow that schedules nothing until an approve or deny update,
// or its approval timeout; for work.Approver() the approvals index of the
// task queue (agentwork.Approvals) lists it. docs/operating-temporal.md
// says how each runs.
//
// # Children that talk back
//
// A Work's updates and questions (Spec.Updates) are its workflow's state,
// decided by the shared driver.UpdateLog: the child's reports are updates
// from its attempt, an update that cannot be accepted never enters the
// history, and only a question's wait is the attempt's (an update held
// open while it heartbeats). docs/operating-temporal.md says how they run.
//
// Nothing here implements a queue, a timer, a retry or persistence: they
// are Temporal's.
//
// # Telemetry
//
// A Work's lifecycle events (queued, running, cancel-requested, the
// terminal one, detached, guidance accepted, delivered and dropped) are
// decided by its workflow and reported, with workflow time, to the
// Observer (work.WithObserver, through WithOptions) of the Worker whose
// process runs the workflow task; the coordinator's Engine reports refused
// starts, result reads and the detach of ended Work. With the telemetry
// Observer on every process, a Work has one "invoke_agent {target}" span
// (a root linked to the launching span, whose trace context travels in the
// workflow's input) and the same metrics and log lines as in-process. When
// a workflow is rebuilt from its history in another process (its worker
// died, or evicted it from its cache), the Observer is bound again at the
// first event reported live there, and the replayed events before it go to
// its Replay method (observe.Replayer): the span is rebuilt there with its
// original times and exported once, when the Work ends; metrics and logs
// are not counted again. A replay that reports nothing live (a query of a
// workflow the worker does not cache, a closed one included) rebuilds no
// span. Delivery is at least once: a workflow task whose worker dies after
// reporting and before completing reports again, on the Worker that runs
// it anew; a task lost otherwise (timed out, its completion refused) and
// run again by the Worker that reported the Work's end reports nothing
// again, so its span is exported once, unless it ends otherwise this time
// (a cancel or a deadline came meanwhile): that end is reported on a span
// of its own. The child's own spans nest under the SDK interceptor's
// RunActivity span when the client has the interceptor. A child's progress
// reaches the Worker's Observer (EventProgress) and its attempt's
// heartbeats: Status reads a running Work's counts from the last heartbeat
// (one more call to Temporal), and a settled Work keeps its last counts in
// its owner's registry (List has only those).
//
// # Gauges and status pages
//
// Both halves of a deployment implement observe.Watched, which the
// telemetry gauges and status page watch: a Worker's Snapshot is its own
// slots (Worker.Snapshot; Prometheus sums them across workers), the
// Engine's the deployment's, read from Temporal (see New).
// docs/operating-temporal.md says what each process exports, how to wire
// and scrape them, and what a refresh costs.
//
// # Content
//
// Failure text never leaves the worker (an attempt reports a class), and
// nothing here logs or traces content. The child's input and its output
// are payloads in the Work's history; a guidance message is a payload in
// its holder's history until the holder deletes itself (see Mapping); a
// child's update values are payloads in its Work's history (its workflow
// state), never in its owner's registry, a span, a metric or a log line. Use
// a payload codec on the client (client.Options.DataConverter) to encrypt
// them, and give the Engine and every Worker the same converter
// (WithDataConverter).
package temporal
