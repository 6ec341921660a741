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
	return func(r Request) bool {
		for _, m := range r.Messages {
			if m.Role == schema.User {
				return strings.Contains(m.Content, s)
			}
		}
		return false
	}
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
type Router struct{ routes []Route }

var _ model.ToolCallingChatModel = (*Router)(nil)

// NewRouter returns a Router over routes, tried in order.
func NewRouter(routes ...Route) *Router { return &Router{routes: append([]Route(nil), routes...)} }

func (r *Router) pick(input []*schema.Message, opts []model.Option) (*Model, error) {
	o := model.GetCommonOptions(&model.Options{}, opts...)
	req := Request{Messages: input, Tools: o.Tools}
	for _, rt := range r.routes {
		if rt.match(req) {
			return rt.m, nil
		}
	}
	return nil, fmt.Errorf("scripted: no route takes the request (first user message %q)", HumanText(input))
}

// HumanText returns the first user message's content.
func HumanText(msgs []*schema.Message) string {
	for _, m := range msgs {
		if m.Role == schema.User {
			return m.Content
		}
	}
	return ""
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

// WithTools returns r.
func (r *Router) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return r, nil }

// ProviderName returns "scripted".
func (r *Router) ProviderName() string { return "scripted" }
