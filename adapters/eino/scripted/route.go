package scripted

import (
	"context"
	"fmt"
	"strings"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
)

// Match decides whether a route takes a request.
type Match func(Request) bool

// Declares matches a request that offers a tool named name.
func Declares(name string) Match { return func(r Request) bool { return r.Declares(name) } }

// HumanContains matches a request whose first user message contains s
// (the agent's input).
func HumanContains(s string) Match {
	return func(r Request) bool { return strings.Contains(r.FirstUser(), s) }
}

// Otherwise matches every request.
func Otherwise() Match { return func(Request) bool { return true } }

// Route is one route of a Router.
type Route struct {
	match Match
	m     *Model
}

// When routes the requests match accepts to m.
func When(match Match, m *Model) Route { return Route{match: match, m: m} }

// Router sends each request to the first route whose match accepts it.
type Router struct {
	routes []Route
	tools  []*schema.ToolInfo // bound by WithTools
}

var _ model.ToolCallingChatModel = (*Router)(nil)

// NewRouter returns a Router over routes, tried in order.
func NewRouter(routes ...Route) *Router { return &Router{routes: append([]Route(nil), routes...)} }

func (r *Router) pick(input []*schema.Message, opts []model.Option) (*Model, error) {
	req, err := NewRequest(input, r.tools, opts)
	if err != nil {
		return nil, err
	}
	for _, rt := range r.routes {
		if rt.match(req) {
			return &Model{s: rt.m.s, tools: r.tools, cache: rt.m.cache}, nil
		}
	}
	return nil, fmt.Errorf("scripted: no route takes the request (first user message %q)", req.FirstUser())
}

// Generate answers with the chosen route's model.
func (r *Router) Generate(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	m, err := r.pick(input, opts)
	if err != nil {
		return nil, err
	}
	return m.Generate(ctx, input, opts...)
}

// Stream answers with the chosen route's model.
func (r *Router) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	m, err := r.pick(input, opts)
	if err != nil {
		return nil, err
	}
	return m.Stream(ctx, input, opts...)
}

// WithTools returns a Router that offers tools with each request that
// passes none of its own.
func (r *Router) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return &Router{routes: r.routes, tools: tools}, nil
}

// ProviderName returns "scripted".
func (r *Router) ProviderName() string { return "scripted" }
