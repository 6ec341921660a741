package work

import "context"

// TargetInfo describes the target a model-facing call is about to invoke,
// for telemetry: the generative-AI provider of a child agent's model, the
// agent's id and the tool's description. Every field is optional. It must
// hold no prompt, input or output: Observers put it on spans.
type TargetInfo struct {
	// Provider names the child agent's model provider as the OpenTelemetry
	// GenAI conventions spell it ("openai", "anthropic", "ollama", ...).
	Provider string
	// AgentID is the child agent's stable id (the Ref's targetId).
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
