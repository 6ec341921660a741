package observe

import "context"

// TargetInfo describes the target a model-facing call is about to invoke,
// for telemetry: the generative-AI provider of a child agent's model, the
// agent's id and the tool's description. Every field is optional. It must
// hold no prompt, input or output: Observers put it on spans.
type TargetInfo struct {
	// Provider names the child agent's model provider as the OpenTelemetry
	// GenAI conventions spell it ("openai", "anthropic", "ollama", ...).
	Provider string
	// AgentID is the child agent's stable id (the work.Ref's targetId).
	AgentID string
	// Description is the tool's description, as the model reads it.
	Description string
}

type targetInfoKey struct{}

// WithTargetInfo returns ctx carrying info for the Observer: an adapter sets
// it on the context of a child tool call before the call begins. The engine
// never copies it into a child's context.
func WithTargetInfo(ctx context.Context, info TargetInfo) context.Context {
	return context.WithValue(ctx, targetInfoKey{}, info)
}

// TargetInfoFrom returns the TargetInfo ctx carries, if any.
func TargetInfoFrom(ctx context.Context) (TargetInfo, bool) {
	info, ok := ctx.Value(targetInfoKey{}).(TargetInfo)
	return info, ok
}

type callTracedKey struct{}

// WithToolCallTraced returns ctx telling the Observer that the agent
// framework already traces the model-facing call that begins with ctx:
// its span for the call (an execute_tool span) is ctx's current span. The
// Observer then makes no call span of its own (telemetry: no
// "execute_tool {label}" or "execute_tool work" span) and uses that span
// in its place. An adapter sets it, on an application's option, where the
// framework's own tracing (an Eino callbacks.Handler) makes a span for
// every tool call. The engine never copies it into a child's context.
func WithToolCallTraced(ctx context.Context) context.Context {
	return context.WithValue(ctx, callTracedKey{}, true)
}

// ToolCallTraced reports whether ctx carries WithToolCallTraced.
func ToolCallTraced(ctx context.Context) bool {
	v, _ := ctx.Value(callTracedKey{}).(bool)
	return v
}
