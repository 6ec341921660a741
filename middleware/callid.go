package middleware

import "context"

type callIDKey struct{}

// WithCallID returns a copy of ctx carrying the model's tool-call identity
// for the tool call about to be made. Launches report it, and send is
// idempotent on it. Adapters set it to the provider-issued tool-call id,
// never to a made-up one (a counter would repeat across agent instances of
// one owner and make one launch replay another's); a call without one is
// never deduplicated. A nil ctx is taken as context.Background().
func WithCallID(ctx context.Context, id string) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithValue(ctx, callIDKey{}, id)
}

// CallID returns the tool-call identity ctx carries, or "" (also for a
// nil ctx).
func CallID(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}
