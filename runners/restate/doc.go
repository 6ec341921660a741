// Package restate runs agentwork's background Work on Restate: a
// work.Engine (Engine) for coordinator processes and a Worker, an SDK
// deployment serving the Restate services, for the processes that run
// children. The model-facing contract is the same as under the
// in-process work.Engine, except that a work.ref's guarantees say
// "durable" and a status's attempt counts real attempts.
//
//	opts := []restate.Option{restate.WithIngress("http://restate:8080"),
//		restate.WithAdmin("http://restate:9070"), restate.WithOptions(work.WithObserver(obs))}
//	// Worker processes serve the children they can run (and the registry):
//	w, err := restate.NewWorker(map[string]restate.Child{
//		"research": {Kind: work.KindAgent, Run: researcher.Run}}, append(opts, restate.WithRegistry())...)
//	err = w.Start(ctx)
//	// Coordinator processes: the Engine replaces work.New().
//	eng := restate.New(opts...)
//	kit, err := langchaingo.Prepare(ctx, eng, llm, tools, langchaingo.WithOwner("coordinator-1"))
//
// ExampleNewWorker and ExampleNew are both halves in full.
//
// # Mapping
//
//   - One Virtual Object per owner (agentwork.Owner, keyed by the owner's
//     id) is its registry: its visible Work (list, status, status rows,
//     retention), the starts count, the launch identities and the pool.
//     Restate runs one exclusive handler per key at a time, so admission
//     (the outstanding and starts limits, the launch identity) holds
//     across every coordinator process with no lock of ours. Admission is
//     one invocation: it records the Work, creates its control object and
//     sends the Work's workflow its start, each a journaled step, so a
//     coordinator that dies during Start leaves either no Work or a Work
//     that runs.
//   - One Virtual Object per Work (agentwork.Control, keyed by the Work's
//     id) is the Work's state machine: queued, running, cancel-requested,
//     then one terminal state, each transition decided by one exclusive
//     handler (claim, cancel, finish, release) and sent to the owner's
//     registry with a revision, which never moves a record back. It holds
//     the guidance mailbox (messages, cursors, the command records with a
//     digest, never the text) until the child takes the messages at its
//     model boundary or the Work ends; it reports the Work's lifecycle
//     events to the Observer of the process that serves it.
//   - One Workflow per Work (agentwork.Work.<label>, keyed by the Work's
//     id), served only by the Worker that registered the target. Its run
//     handler runs the child in one journaled step (restate.RunAsync) and
//     gives the outcome to the control object, which keeps a completed
//     Work's output in its state (read by the Engine through a shared
//     handler) while the owner's registry keeps the Work's record: a Work
//     the registry evicts (retention), or that its owner detached or
//     released, has its control object's state cleared. A child's failure
//     text never leaves the process.
//     The step first claims an attempt from the Work's control object:
//     that claim is the "started" marker. The child does not end with the
//     step's stream: a process whose stream the server lost (it restarted,
//     or the network was cut) holds the attempt. A step that Restate
//     retries claims again and finds the previous attempt started and not
//     finished: for the rejoin window (30 s from that claim) it is Busy and
//     Restate runs the step again until it reaches the process holding the
//     attempt, which takes it back (the step's result is the attempt's);
//     after it the Work fails with class worker_lost (its process died),
//     unless the target is declared retryable (WithRetryable), when the
//     child runs again and attempt counts it. A held attempt nobody took
//     back is cancelled (class unreachable). See rejoin.go.
//   - Cancellation: the control object resolves the Work workflow's
//     stop promise, which the workflow handler awaits beside its running
//     step (restate.RunAsync): the completion arrives on the invocation's
//     open stream and the child's context is cancelled at once
//     (cooperative, as in-process). As a fallback the step also reads the
//     control object's shared state handler every four poll intervals
//     (WithPollInterval). Guidance reaches the child through the ingress:
//     at each model boundary (driver.Remote.Guidance) the step takes the
//     messages accepted since the last one, and a cancel found there
//     cancels the context before the boundary's request goes out.
//   - Every service sets its inactivity and abort timeouts above the
//     Work's maximum duration (the default budget's MaxDuration, WithOptions; 30 minutes
//     by default, none with -1), so
//     that Restate never aborts and replays a long child.
//   - A Work's budget (Spec.Budget with the defaults and ceiling applied)
//     travels in the workflow's input and is counted at the child's
//     boundary by driver.Remote, as the Temporal runner does.
//
// # Work that waits
//
// An external job (a Child with a Job; the coordinator's Spec.Job says
// that a Work is one) is its Work's workflow too: Submit is a journaled
// step on one of the target's slots, then durable timers between polls
// (journaled steps, at most Job.MaxPolls at once per Worker), raced
// against the workflow's stop promise. A Work that needs approval
// (Spec.NeedsApproval) waits, before any attempt, on its approval
// promise, which its control object resolves when it is answered.
// docs/operating-restate.md says how each runs.
//
// # Children that talk back
//
// A Work's updates and questions (Spec.Updates) are its control object's
// state, decided by the shared driver.UpdateLog: the child's reports are
// calls from its attempt through the ingress, and only a question's wait
// is the attempt's. docs/operating-restate.md says how they run.
//
// Restate routes each service to the deployment registered last and does
// not balance between deployments: run several worker processes for one
// target behind a load balancer registered as one URL, and the registry
// services (WithRegistry) from a deployment of its own that outlives the
// workers (docs/deploying-restate.md).
//
// Nothing here implements a queue, a timer, a retry or persistence: they
// are Restate's.
//
// # Telemetry
//
// A Work's lifecycle events (queued, approval requested, approved,
// denied, running, cancel-requested, waiting, polled, the terminal one,
// detached, guidance accepted, delivered and dropped, updates, budget
// and usage) are decided by its control object and reported to the
// Observer (work.WithObserver, through WithOptions) of the Worker that serves the registry
// (WithRegistry), which binds each Work (Observer.Bind, with the
// launch's trace context from the Work's input) at its first event
// there: with the telemetry Observer, one "invoke_agent {target}" span
// per Work and the same metrics and log lines as in-process. A registry
// process that restarts binds a live Work again at its next event (the
// span restarts there). Delivery is at least once: a control object's
// handler that Restate retries after it reported reports again. The
// attempt's progress events go to the Observer of the Worker running
// it; the Engine reports refused starts, result reads and the detach of
// ended Work. A running attempt sends its child's progress counts to the
// Work's control object with its state read (every four poll intervals,
// only when they changed: no call of its own), and Status of a running
// Work reads them there; a settled Work's registry record keeps the last
// ones.
//
// # Gauges
//
// Both halves of a deployment implement observe.Watched, which the
// telemetry gauges and status page watch: a Worker's Snapshot is its own
// slots (Worker.Snapshot), the Engine's the deployment's, read from
// Restate's introspection (see New). docs/operating-restate.md says what
// each process exports and what a refresh costs.
//
// # Content
//
// The child's input and output are journal entries and state in Restate,
// and a guidance message is state of its Work's control object until the
// child takes it or the Work ends. Failure text never leaves the worker
// (an attempt reports a class), and nothing here logs or traces content.
// A child's update values are state of its control object, never of its
// owner's registry. The registry objects keep no journal of their
// invocations (which carry inputs, guidance and update values): their
// state is all they keep.
//
// WithContentKeys seals that content before it reaches Restate (in the
// journal, the state and the invocations' inputs), each AES-256-GCM
// envelope bound to its Work and field; docs/operating-restate.md says
// what stays in the clear, how to rotate the keys, and why the SDK's
// payload codec is not used for it.
//
// # Trust
//
// A Worker serves plain HTTP/2 to whoever reaches its address unless it
// is given the server's request identity keys (WithIdentityKeys): then it
// serves only the requests the Restate server signed. A process that can
// reach the ingress or the admin API can act on any owner's Work (owner
// ids separate agents, not processes); WithHTTPClient gives the Engine
// and the Worker the credentials of a protected ingress and admin API.
package restate
