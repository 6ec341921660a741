// Package telemetry implements the engine's observer seam (observe.Observer
// and observe.Watcher) with OpenTelemetry traces and metrics and log/slog. It
// imports only the OTel API: the caller injects the providers (WithTracerProvider,
// WithMeterProvider; the OTel globals by default). For a Prometheus scrape
// endpoint see the promexport subpackage.
//
//	obs, err := telemetry.New(telemetry.WithLogger(slog.Default()))
//	...
//	s := work.New(work.WithObserver(obs))
//
// # Spans
//
// The names follow the OTel GenAI conventions where they fit and are
// public API:
//
//   - "execute_tool {label}" (INTERNAL, a child of the caller's span): a
//     launch with run_in_background, or a foreground call. A launch span
//     links to the Work's "invoke_agent" span. A call that may move to the
//     background after a bound (the middleware's auto-background option)
//     is a launch whose span ends when the call returns: with the exact
//     output, or with the ref at the bound. A foreground function child
//     runs under this span; a foreground agent child runs under an
//     "invoke_agent {label}" child span of it.
//   - "invoke_agent {label}" (INTERNAL): a background execution. It is a
//     new root (it outlives the launch) with a link to the launch span (and
//     the launch span links back); the child's own spans nest under it and
//     it ends with the Work's terminal event.
//   - "execute_tool work": one call of the work tool, with agentwork.action.
//
// Where the agent framework makes an execute_tool span of its own for
// every tool call (an Eino callbacks.Handler) and the adapter marks the
// call (observe.WithToolCallTraced, an adapter's option), there is no
// "execute_tool" span of agentwork's: the framework's span takes its
// place (see Observer.Begin).
//
// Attributes: gen_ai.operation.name (execute_tool or invoke_agent),
// gen_ai.tool.name, gen_ai.tool.call.id, gen_ai.tool.type (function),
// gen_ai.tool.description, gen_ai.agent.name, gen_ai.agent.id,
// gen_ai.provider.name (the last three from an observe.TargetInfo the adapter
// puts on the call's context, when it knows them; semantic conventions
// v1.41.0; an agent child's "invoke_agent" span always has
// gen_ai.provider.name, ProviderUnknown when it is not known),
// agentwork.work.id, agentwork.work.target, agentwork.work.state (on
// "invoke_agent": queued as the span starts, and as it ends the state
// the Work ended in, or was left in when orphaned; each transition
// between is a span event), agentwork.action, and error.type: a
// low-cardinality class (panic, error, deadline_exceeded,
// result_too_large, a call outcome or an error code), never an error's
// text. Errors are marked with status Error and an empty
// description; RecordError is never used.
//
// Span events on "invoke_agent", one per lifecycle event, namespaced:
// agentwork.work.queued, agentwork.work.running,
// agentwork.work.cancel_requested, agentwork.work.completed,
// agentwork.work.failed, agentwork.work.cancelled (each with
// agentwork.work.state), agentwork.work.detached,
// agentwork.work.guidance.accepted, agentwork.work.guidance.delivered,
// agentwork.work.guidance.dropped (with agentwork.guidance.count),
// agentwork.work.result.read (with agentwork.result.bytes; completed has it
// too, failed has error.type), agentwork.work.progress (at most one a
// second per Work: agentwork.progress.done, agentwork.progress.total,
// agentwork.progress.model_requests, agentwork.progress.tool_calls; counts
// only) and agentwork.work.orphaned (a Work Shutdown abandoned, with the
// agentwork.work.state it was left in; it ends the span with status Error
// and error.type=orphaned).
//
// A call that moved to the background at its bound (observe.EventBackgrounded)
// is the event agentwork.work.backgrounded, with the agentwork.work.state it
// moved in (queued or running), on the Work's "invoke_agent" span when this
// process bound the Work (the in-process engine always does; a durable
// runner when its worker shares the Observer), else on the call's
// "execute_tool" span, which carries the Work's id.
//
// Work that waits: agentwork.work.waiting (an external job was submitted
// and waits between polls, holding no running slot),
// agentwork.work.approval_requested, agentwork.work.approved and
// agentwork.work.denied (then agentwork.work.cancelled). Polls are counted,
// not recorded one by one: a job polled every 30 s for a day would
// otherwise add some 2,900 events. As a job's span ends (its terminal or
// orphaned event) it gets one event agentwork.work.polls, just before the
// terminal one, with agentwork.job.polls.waiting, agentwork.job.polls.done,
// agentwork.job.polls.failed and agentwork.job.polls.error (transient poll
// errors, and any outcome an engine reports that is not one of the four),
// and the span attribute agentwork.job.polls (the total). The counts live
// in the Observer (a few dozen bytes per polling Work, by work id) until
// the Work's terminal or orphaned event, or until a census finds no watched
// engine holding it live; they are the polls this process reported or
// replayed (a durable engine's Work may poll in several processes). The handle, the job's output and an approval
// request's input never reach a span.
//
// Children that talk back: each update a child reports (observe.EventUpdate)
// is an event agentwork.work.update: accepted, with agentwork.update.seq,
// agentwork.update.bytes and agentwork.update.question; refused, with
// error.type (the reason: not_declared, count, bytes, ending, conflict,
// invalid, else _OTHER), agentwork.update.bytes when the engine gave the
// size, and agentwork.update.question. A repeat the engine answers as a
// duplicate reports no event. A Work gets at most 32 such events (the
// default bound of its accepted updates); a Work allowed more (up to
// 1,024) or a child that keeps reporting after refusals
// (they have no bound of their own) gets no event for the rest, and a
// foreground call's child (it has no Work: its updates are refused
// not_declared) none; they count in the metrics and logs. As the
// span ends it gets agentwork.work.updates (accepted) and
// agentwork.work.updates.refused, and agentwork.work.updates.unrecorded
// (updates without an event) when some were left out. The counts live
// with a job's poll counts, as long. An update's value never reaches a
// span: a question is a flag, and its answer is guidance
// (agentwork.work.guidance.accepted, ...delivered, counts only).
// The engine reports a result read, and guidance dropped when a Work ends,
// after the terminal event that ended the span: such events go on the open
// "execute_tool work" span of the call that caused them, when there is one.
// On the caller's span: agentwork.start.refused (error.type = the reason:
// closed, outstanding, starts or depth) and agentwork.status_block
// (agentwork.status_block.rows).
//
// # Metrics
//
// Instrument names are chosen so that the OTel Prometheus exporter with
// otlptranslator.UnderscoreEscapingWithSuffixes (what promexport sets)
// exports exactly:
//
//	agentwork_work_items{state,target}                gauge, from the watched engines' Snapshot at collection; every state, 0 included;
//	                                                  terminal states count retained Work only (use the counter for totals)
//	agentwork_work_concurrency_limit{target}          gauge, running limits: target "*" for one all of an engine's
//	                                                  targets share (an in-process engine's MaxRunning, summed), else that
//	                                                  target's own (a Temporal Worker's per-target limit)
//	agentwork_work_slots_in_use{target}               gauge, running + cancel-requested (both hold a slot) in this process,
//	                                                  except external jobs waiting between polls (they hold none)
//	agentwork_target_pollers{target}                  gauge, workers polling the target's queue (a durable engine's
//	                                                  deployment view only, observe.Snapshot.Deployment)
//	agentwork_engine_available                        gauge, 1 when every watched engine answered its Snapshot (within
//	                                                  WithSnapshotTimeout) at this collection, 0 when one did not: the
//	                                                  other gauges then leave out what it holds, never report it as 0
//	agentwork_work_oldest_queued_age_seconds{target}  gauge, age of the oldest queued Work (0 when none): in the dispatch queue
//	                                                  only, so not Work awaiting approval, and counted from the approval
//	                                                  for approved Work (LiveWork.Enqueued)
//	agentwork_work_oldest_cancel_requested_age_seconds{target}
//	                                                  gauge, how long the oldest cancel-requested Work has waited to stop
//	agentwork_work_transitions_total{state,target}    counter, per state entered
//	agentwork_work_duration_seconds{target,outcome}   histogram, outcome completed|failed|cancelled
//	agentwork_work_queue_wait_seconds{target}         histogram
//	agentwork_work_actions_total{action,outcome}      counter, work-tool calls
//	agentwork_guidance_messages_total{event}          counter, accepted|delivered|dropped
//	agentwork_status_block_rows                       histogram
//	agentwork_work_result_bytes{target}               histogram, completed results' sizes
//	agentwork_work_starts_refused_total{target,reason} counter
//	agentwork_work_orphaned_total{target}             counter, Works an in-process engine's Shutdown abandoned
//	agentwork_work_backgrounded_total{target}         counter, child calls that moved to the background at their bound
//	agentwork_work_waiting{target}                    gauge, external jobs waiting between polls (counted as running in items)
//	agentwork_work_awaiting_approval{target}          gauge, Work awaiting approval (counted as queued in items)
//	agentwork_work_oldest_approval_age_seconds{target}
//	                                                  gauge, how long the oldest pending approval has waited (0 when none)
//	agentwork_job_polls_total{target,outcome}         counter, polls of external jobs: waiting|done|failed|error
//	agentwork_work_updates_total{target,outcome}      counter, updates children reported: accepted or the refusal reason
//	                                                  (not_declared|count|bytes|ending|conflict|invalid)
//	agentwork_work_update_bytes{target}               histogram, accepted updates' encoded sizes (16 B to 1 MiB by fours)
//
// Every label value comes from a bounded set: the six states, the target
// labels, the six actions (anything else is "invalid"), the six call
// outcomes (ok, not_found, rejected, invalid, timeout, failed), the three
// guidance events, the refusal reasons, the four poll outcomes and the
// update outcomes (anything else is "_OTHER"). No id is ever a label.
//
// # Logs
//
// One line per lifecycle event, its message the span event's name
// ("agentwork.work.queued", "agentwork.work.failed", ...), Debug
// for everything but failures and orphans, which are Warn (a deadline is a
// failure with error.type=deadline_exceeded), and the approval events
// (agentwork.work.approval_requested, agentwork.work.approved,
// agentwork.work.denied) and a call's move to the background
// (agentwork.work.backgrounded, with from: the state it moved in), which
// are Info. A poll writes no line; a job's
// terminal line carries its non-zero poll counts (polls.waiting,
// polls.done, polls.failed, polls.error). An update writes the line
// agentwork.work.update (Debug; Info for an accepted question: the child
// waits for its supervisor) with outcome (accepted or the refusal reason),
// update.seq (accepted), bytes and update.question; a Work's terminal line
// carries its non-zero update counts (updates.accepted, updates.refused).
// Fields: work.id, work.target,
// work.state, from, error.type, queue_wait, duration, count, bytes,
// progress.done, progress.total, progress.model_requests,
// progress.tool_calls (progress lines), owner.depth, and
// trace_id and span_id whenever a span is in the context. A
// refused start logs "work start refused", a status block "status block",
// and the end of a foreground call "foreground call" (Warn unless its
// outcome is ok). The default logger discards everything; pass WithLogger
// to opt in.
//
// # Status page
//
// StatusHandler is a zpages-style live page (HTML that reloads itself, or
// JSON): slots in use against the limit (running and cancel-requested Work
// except jobs waiting between polls), the queue's length and oldest age
// (Work awaiting approval is not in the queue), the jobs waiting and the
// Work awaiting approval with the oldest request's age, every target's
// Work by state, and each live Work's id, target, owner, state (marked
// when a job waits between polls or a Work awaits approval), elapsed
// time, attempt and progress counts. Long-running Work, whose
// "invoke_agent" span is not exported until it ends, is visible there.
//
// # Content
//
// Child output, failure text, prompts, guidance text, job handles and
// outputs, approval inputs, and update values and questions never reach a
// span, an event, an attribute, a metric, a log line or the status page:
// the seam does not carry them, and the few model-controlled strings a call
// carries (an action, a work id, a tool-call id) are recorded only when
// they have their expected form. There is no opt-in.
//
// # Identifiers
//
// An id the model or its provider chooses is recorded only when it cannot
// be free text:
//
//   - agentwork.work.id on "execute_tool work" only when the action names
//     a Work that exists for the calling owner (the middleware passes the
//     id only then): an unknown, another owner's or a detached id is not
//     recorded. Launch and "invoke_agent" spans carry the engine's own id.
//   - gen_ai.tool.call.id only when it has a provider-issued shape: 1 to 64
//     ASCII letters, digits, '_' and '-' (OpenAI "call_…", Anthropic
//     "toolu_…"). Longer ids, or ids with any other character (spaces,
//     '.', ':', '/', non-ASCII), are left out.
package telemetry
