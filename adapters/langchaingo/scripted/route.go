package scripted

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// ErrNoRoute is wrapped by the error of a request that no route of a
// [Router] accepts.
var ErrNoRoute = errors.New("scripted: no route accepts the request")

// Routed is one route of a [Router]: requests its match accepts go to its
// model. Build it with [When] or [Otherwise].
type Routed struct {
	match func(Request) bool
	model llms.Model
	label string
}

// When returns a route: requests that match accepts go to m (normally a
// *Model with its own script). match receives a deep copy of the request,
// numbered in the Router's lifetime; it must not block.
func When(match func(req Request) bool, m llms.Model) Routed {
	return Routed{match: match, model: m, label: "When"}
}

// Otherwise returns a route that accepts every request: the last route of a
// Router whose other requests all go to m.
func Otherwise(m llms.Model) Routed {
	return Routed{match: func(Request) bool { return true }, model: m, label: "Otherwise"}
}

// Router is an [llms.Model] that sends each request to the first route
// whose match accepts it, so that one model value serves a coordinator and
// its children, each agent answered by its own script whatever the order
// in which their requests arrive:
//
//	coordinator := scripted.New( /* the coordinator's steps */ )
//	child := scripted.New( /* the child's steps */ )
//	llm := scripted.Route(
//		scripted.When(scripted.Declares("work"), coordinator), // the coordinator is offered the work tool
//		scripted.Otherwise(child),
//	)
//
// A Model's steps are taken in arrival order, so agents sharing one Model
// (a coordinator and a background child run concurrently) would take each
// other's steps; a Router gives each its own.
//
// A request no route accepts fails with an error wrapping [ErrNoRoute]; a
// route with a nil model or match fails its requests with an error naming
// it. A Router is safe for concurrent use; it starts no goroutines and
// holds no resources. The zero Router has no routes.
type Router struct {
	routes []Routed
}

var _ llms.Model = (*Router)(nil)

// Route returns a Router over routes, tried in order.
func Route(routes ...Routed) *Router {
	return &Router{routes: slices.Clone(routes)}
}

// GenerateContent implements [llms.Model]: it records the request as a
// [Model] does (without keeping it), asks each route's match in order and
// passes the call, unchanged, to the first accepting route's model.
func (r *Router) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var opts llms.CallOptions
	for _, o := range options {
		o(&opts)
	}
	req, err := record(0, messages, opts)
	if err != nil {
		return nil, fmt.Errorf("scripted: Router: %w", err)
	}
	for i, rt := range r.routes {
		if rt.match == nil || rt.model == nil {
			return nil, fmt.Errorf("scripted: Router: route %d (%s) has a nil match or model", i, rt.label)
		}
		if rt.match(req.clone()) {
			return rt.model.GenerateContent(ctx, messages, options...)
		}
	}
	return nil, fmt.Errorf("%w: first human text %q, tools %v", ErrNoRoute, clip(firstHuman(req), 80), req.ToolNames())
}

// Call implements [llms.Model]'s legacy Call through GenerateContent.
func (r *Router) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, r, prompt, options...)
}

// ProviderName returns "scripted", as [Model.ProviderName] does.
func (r *Router) ProviderName() string { return "scripted" }

// Declares returns a match for [When] accepting requests that offer a tool
// or function named name. A coordinator prepared by the langchaingo
// adapter is offered the "work" tool, its children are not (children
// never see their parent's tools), so Declares("work") tells them apart
// for a function-calling agent.
func Declares(name string) func(Request) bool {
	return func(req Request) bool { return slices.Contains(req.ToolNames(), name) }
}

// HumanContains returns a match for [When] accepting requests whose first
// human message contains s: the agent's input, or a text agent's whole
// rendered prompt (OneShot and Conversational agents write their tools and
// input into one human message).
func HumanContains(s string) func(Request) bool {
	return func(req Request) bool { return strings.Contains(firstHuman(req), s) }
}

func firstHuman(req Request) string {
	for _, m := range req.Messages {
		if m.Role == llms.ChatMessageTypeHuman {
			return m.Text()
		}
	}
	return ""
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
