// Package telemetry implements the engine's observer seam (work.Observer
// and work.Watcher) with OpenTelemetry traces and metrics and log/slog. It
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
//     links to the Work's "invoke_agent" span. A foreground function child
//     runs under this span; a foreground agent child runs under an
//     "invoke_agent {label}" child span of it.
//   - "invoke_agent {label}" (INTERNAL): a background execution. It is a
//     new root (it outlives the launch) with a link to the launch span (and
//     the launch span links back); the child's own spans nest under it and
//     it ends with the Work's terminal event.
//   - "execute_tool work": one call of the work tool, with agentwork.action.
//
// Attributes: gen_ai.operation.name (execute_tool or invoke_agent),
// gen_ai.tool.name, gen_ai.tool.call.id, gen_ai.tool.type (function),
// gen_ai.tool.description, gen_ai.agent.name, gen_ai.agent.id,
// gen_ai.provider.name (the last three from a work.TargetInfo the adapter
// puts on the call's context, when it knows them; semantic conventions
// v1.41.0),
// agentwork.work.id, agentwork.work.target, agentwork.work.state,
// agentwork.action, and error.type: a low-cardinality class (panic, error,
// deadline_exceeded, result_too_large, a call outcome or an error code),
// never an error's text. Errors are marked with status Error and an empty
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
//	agentwork_work_concurrency_limit                  gauge, sum of the watched supervisors' MaxRunning
//	agentwork_work_slots_in_use                       gauge, running + cancel-requested (both hold a slot)
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
//	agentwork_work_orphaned_total{target}             counter, Works a Supervisor's Shutdown abandoned
//
// Every label value comes from a bounded set: the six states, the target
// labels, the six actions (anything else is "invalid"), the six call
// outcomes (ok, not_found, rejected, invalid, timeout, failed), the three
// guidance events, the refusal reasons. No id is ever a label.
//
// # Logs
//
// One line per lifecycle event, its message the span event's name
// ("agentwork.work.queued", "agentwork.work.failed", ...), Debug
// for everything but failures and orphans, which are Warn (a deadline is a
// failure with error.type=deadline_exceeded). Fields: work.id, work.target,
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
// JSON): slots in use against the limit, the queue's length and oldest
// age, every target's Work by state, and each live Work's id, target,
// owner, state, elapsed time, attempt and progress counts. Long-running Work, whose
// "invoke_agent" span is not exported until it ends, is visible there.
//
// # Content
//
// Child output, failure text, prompts and guidance text never reach a span,
// an event, an attribute, a metric or a log line: the seam does not carry
// them, and the few model-controlled strings a call carries (an action, a
// work id, a tool-call id) are recorded only when they have their expected
// form. There is no opt-in.
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
