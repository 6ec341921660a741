package telemetry

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/agentwork/agentwork/work/observe"
)

// ScopeName is the instrumentation scope of the tracer and meter.
const ScopeName = "github.com/agentwork/agentwork/telemetry"

// ProviderUnknown is gen_ai.provider.name (Required on invoke_agent spans
// by the GenAI conventions) on the "invoke_agent" span of an agent child
// whose model provider is not known: its adapter could not derive it from
// the child's model client and no option named it (langchaingo.WithProvider,
// eino.WithProvider). It is "_OTHER", OpenTelemetry's value for a member
// outside an attribute's known set. Children without a model (functions,
// tools, jobs) carry no gen_ai.provider.name.
const ProviderUnknown = "_OTHER"

// Span names and attribute keys. They are public API (DESIGN.md, Telemetry
// contract); the tests pin them as literals.
const (
	spanExecuteTool = "execute_tool "
	spanInvokeAgent = "invoke_agent "
	spanWorkAction  = "execute_tool work"

	opExecuteTool = "execute_tool"
	opInvokeAgent = "invoke_agent"

	keyOperation   = attribute.Key("gen_ai.operation.name")
	keyAgentName   = attribute.Key("gen_ai.agent.name")
	keyAgentID     = attribute.Key("gen_ai.agent.id")
	keyProvider    = attribute.Key("gen_ai.provider.name")
	keyToolName    = attribute.Key("gen_ai.tool.name")
	keyToolCallID  = attribute.Key("gen_ai.tool.call.id")
	keyToolType    = attribute.Key("gen_ai.tool.type")
	keyToolDesc    = attribute.Key("gen_ai.tool.description")
	keyErrorType   = attribute.Key("error.type")
	keyWorkID      = attribute.Key("agentwork.work.id")
	keyWorkTarget  = attribute.Key("agentwork.work.target")
	keyWorkState   = attribute.Key("agentwork.work.state")
	keyAction      = attribute.Key("agentwork.action")
	keyGuidanceN   = attribute.Key("agentwork.guidance.count")
	keyResultBytes = attribute.Key("agentwork.result.bytes")
	keyStatusRows  = attribute.Key("agentwork.status_block.rows")

	keyProgressDone     = attribute.Key("agentwork.progress.done")
	keyProgressTotal    = attribute.Key("agentwork.progress.total")
	keyProgressRequests = attribute.Key("agentwork.progress.model_requests")
	keyProgressTools    = attribute.Key("agentwork.progress.tool_calls")

	// toolTypeFunction is gen_ai.tool.type for every tool the middleware
	// prepares: the application, not the provider, executes it.
	toolTypeFunction = "function"

	// otherErrorType replaces an error class that does not look like one
	// (the OTel semantic conventions' fallback value for error.type).
	otherErrorType = "_OTHER"
)

// Span event names, one per observe.EventType, namespaced under
// "agentwork.work." (a Work's lifecycle) or "agentwork." (the caller's).
const (
	evQueued            = "agentwork.work.queued"
	evRunning           = "agentwork.work.running"
	evCancelRequested   = "agentwork.work.cancel_requested"
	evCompleted         = "agentwork.work.completed"
	evFailed            = "agentwork.work.failed"
	evCancelled         = "agentwork.work.cancelled"
	evDetached          = "agentwork.work.detached"
	evGuidanceAccepted  = "agentwork.work.guidance.accepted"
	evGuidanceDelivered = "agentwork.work.guidance.delivered"
	evGuidanceDropped   = "agentwork.work.guidance.dropped"
	evResultRead        = "agentwork.work.result.read"
	evRefused           = "agentwork.start.refused"
	evStatusBlock       = "agentwork.status_block"
	evProgress          = "agentwork.work.progress"
	evOrphaned          = "agentwork.work.orphaned"
)

func eventName(t observe.EventType) string {
	switch t {
	case observe.EventQueued:
		return evQueued
	case observe.EventRunning:
		return evRunning
	case observe.EventCancelRequested:
		return evCancelRequested
	case observe.EventCompleted:
		return evCompleted
	case observe.EventFailed:
		return evFailed
	case observe.EventCancelled:
		return evCancelled
	case observe.EventDetached:
		return evDetached
	case observe.EventGuidanceAccepted:
		return evGuidanceAccepted
	case observe.EventGuidanceDelivered:
		return evGuidanceDelivered
	case observe.EventGuidanceDropped:
		return evGuidanceDropped
	case observe.EventResultRead:
		return evResultRead
	case observe.EventRefused:
		return evRefused
	case observe.EventStatusBlock:
		return evStatusBlock
	case observe.EventProgress:
		return evProgress
	case observe.EventOrphaned:
		return evOrphaned
	case observe.EventBackgrounded:
		return evBackgrounded
	}
	return waitEventName(t)
}

// Metric instrument names (OTel) and units. Through the OTel Prometheus
// exporter with otlptranslator.UnderscoreEscapingWithSuffixes they become
// the names in the comment: dots turn into underscores, a unit in braces
// adds nothing, "s" adds _seconds, "By" adds _bytes unless the name already
// ends in it, and counters get _total.
const (
	metricItems       = "agentwork.work.items"                       // agentwork_work_items
	metricTransitions = "agentwork.work.transitions"                 // agentwork_work_transitions_total
	metricDuration    = "agentwork.work.duration"                    // agentwork_work_duration_seconds
	metricQueueWait   = "agentwork.work.queue_wait"                  // agentwork_work_queue_wait_seconds
	metricActions     = "agentwork.work.actions"                     // agentwork_work_actions_total
	metricGuidance    = "agentwork.guidance.messages"                // agentwork_guidance_messages_total
	metricStatusRows  = "agentwork.status_block.rows"                // agentwork_status_block_rows
	metricResultBytes = "agentwork.work.result"                      // agentwork_work_result_bytes
	metricRefused     = "agentwork.work.starts_refused"              // agentwork_work_starts_refused_total
	metricLimit       = "agentwork.work.concurrency_limit"           // agentwork_work_concurrency_limit
	metricSlots       = "agentwork.work.slots_in_use"                // agentwork_work_slots_in_use
	metricOldestQueue = "agentwork.work.oldest_queued_age"           // agentwork_work_oldest_queued_age_seconds
	metricOldestCR    = "agentwork.work.oldest_cancel_requested_age" // agentwork_work_oldest_cancel_requested_age_seconds
	metricOrphaned    = "agentwork.work.orphaned"                    // agentwork_work_orphaned_total
	metricPollers     = "agentwork.target.pollers"                   // agentwork_target_pollers
	metricAvailable   = "agentwork.engine.available"                 // agentwork_engine_available
)

// Metric attribute keys: short, because they become Prometheus labels
// verbatim. Every value comes from a bounded set.
const (
	labelState   = attribute.Key("state")
	labelTarget  = attribute.Key("target")
	labelOutcome = attribute.Key("outcome")
	labelAction  = attribute.Key("action")
	labelEvent   = attribute.Key("event")
	labelReason  = attribute.Key("reason")
)

// Histogram bucket boundaries.
var (
	// durationBuckets are the OTel GenAI client-operation boundaries
	// (0.01 s doubling to 81.92 s), continued by doubling for long
	// background work, plus the default 30-minute deadline and an hour.
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12,
		10.24, 20.48, 40.96, 81.92, 163.84, 327.68, 655.36, 1310.72, 1800, 3600}
	// bytesBuckets go by fours from 64 B to 4 MiB (the default result
	// limit is 1 MiB).
	bytesBuckets = []float64{64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304}
	// rowsBuckets cover a status block's 0..12 rows.
	rowsBuckets = []float64{0, 1, 2, 4, 6, 8, 10, 12}
)

// The work tool's actions and the call outcomes: the only values the action
// and outcome labels take.
var (
	actions  = [...]string{"list", "status", "result", "cancel", "detach", "send"}
	outcomes = [...]string{"ok", "not_found", "rejected", "invalid", "timeout", "failed"}
)

const (
	actionInvalid  = "invalid"
	outcomeOK      = "ok"
	outcomeTimeout = "timeout"
	outcomeFailed  = "failed"
)

// normAction maps a work-tool action to itself when it is one of the six,
// else to "invalid" (the model chose it; it must not become a label or an
// attribute verbatim).
func normAction(a string) string {
	for _, v := range actions {
		if a == v {
			return v
		}
	}
	return actionInvalid
}

// normOutcome maps a call outcome to itself when it is one of the six; an
// empty outcome is ok and anything else is failed.
func normOutcome(o string) string {
	if o == "" {
		return outcomeOK
	}
	for _, v := range outcomes {
		if o == v {
			return v
		}
	}
	return outcomeFailed
}

// errorType returns class when it looks like a low-cardinality class
// (1 to 64 of a-z, 0-9, '_', '-', '.', starting with a letter), "" for "",
// and "_OTHER" for anything else, so that a caller that put an error's text
// in ErrorClass cannot leak it.
func errorType(class string) string {
	if class == "" {
		return ""
	}
	if len(class) > 64 || class[0] < 'a' || class[0] > 'z' {
		return otherErrorType
	}
	for i := 0; i < len(class); i++ {
		c := class[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != '-' && c != '.' {
			return otherErrorType
		}
	}
	return class
}

// maxCallID is the longest tool-call id recorded as gen_ai.tool.call.id.
const maxCallID = 64

// validCallID reports whether a tool-call id has a provider-issued shape:
// 1 to 64 ASCII letters, digits, '_' and '-' (OpenAI "call_…", Anthropic
// "toolu_…", Bedrock "tooluse_…", Mistral's nine alphanumerics). Anything
// else may be a string the model chose and is not recorded.
func validCallID(id string) bool {
	if id == "" || len(id) > maxCallID {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// validProvider reports whether a provider name looks like one of the
// GenAI conventions' values: 1 to 64 ASCII letters, digits, '_', '-' and
// '.' ("openai", "gcp.gemini", "aws.bedrock", "azure.ai.openai").
func validProvider(name string) bool {
	if name == "" || len(name) > maxCallID {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}
