package eino

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

// Middleware is agentwork for one Eino ChatModelAgent: add it to the
// agent's Handlers (adk.ChatModelAgentConfig.Handlers). It implements
// adk.ChatModelAgentMiddleware:
//
//   - BeforeAgent prepares the run's tools: children (Child) and
//     backgroundable children (Backgroundable) among the agent's tools are
//     wrapped, ordinary tools pass through untouched, and the automatic
//     work tool is added when any child is backgroundable. A preparation
//     error (an authored "work" tool, a child whose schema declares
//     run_in_background, a child name providers refuse, a closed engine,
//     ...) fails the run before any model call; it wraps one of the
//     sentinels of this package or of package middleware, for errors.Is.
//   - WrapModel appends the owner's status block to each model request of
//     the coordinator as a final user message, without saving it into the
//     conversation; a child's requests never get the coordinator's block.
//   - In a child's run (an agent child, see FromAgent), BeforeModelRewriteState
//     is the child's model-request boundary (middleware.BeginRequest):
//     cooperative cancel, its budget, and its guidance, which is added to
//     the child's conversation as user messages, in order; WrapModel
//     sends a final request without tools when the budget ran out and
//     records the response's token usage; WrapInvokableToolCall counts the
//     child's tool calls against its budget; BeforeAgent adds emit_update
//     for a child that declares updates (WithUpdates).
//
// One Middleware is one coordinator: its owner (WithOwner, else a new
// random one) owns the Work its agent starts, across the agent's runs. Run
// inside a child, it prepares the child's own children in the child's own
// scope instead. A Middleware made by ChildMiddleware has no engine: it
// serves a child agent only.
//
// It is safe for concurrent use. The zero Middleware, and a nil one, has
// no engine: it serves children only, and Release returns ErrNotPrepared.
type Middleware struct {
	*adk.BaseChatModelAgentMiddleware

	sup   *work.Engine
	cfg   config
	owner work.Owner

	mu      sync.Mutex
	claim   *middleware.OwnerClaim // the WithOwner id's claim, from the first top-level run
	current *prepared              // the top-level run's last preparation
	base    *middleware.Kit        // the owner's Kit without tools: status blocks, RunUntilSettled
	sets    []*middleware.Kit      // every Kit prepared for owner, for Release
	prepErr error                  // an option's error, reported at the first run
}

var _ adk.ChatModelAgentMiddleware = (*Middleware)(nil)

// Errors of this package. Preparation errors wrap one of them, one of
// package middleware's (middleware.ErrWorkToolName,
// middleware.ErrInvalidSchema, ...) or the engine's refusal (a closed
// engine: work.ErrClosed).
var (
	// ErrNilContext: a nil context.Context.
	ErrNilContext = errors.New("eino: nil context (pass context.Background() or the request's context)")
	// ErrNoEngine: an agent whose Middleware has no engine (ChildMiddleware,
	// the zero Middleware) lists children among its tools.
	ErrNoEngine = errors.New("eino: this middleware has no engine: build a coordinator's with New")
	// ErrInvalidTool: a tool is nil, its Info fails, or two tools share a
	// name.
	ErrInvalidTool = errors.New("eino: invalid tool")
	// ErrInvalidChild: a child built from nothing (FromAgent of a nil
	// agent, FromTool of a nil tool, Backgroundable of a nil child).
	ErrInvalidChild = errors.New("eino: invalid child")
	// ErrZeroChild: a Child that no constructor made.
	ErrZeroChild = errors.New("eino: zero Child (build it with NewFunction, NewJob, FromAgent, NewAgent or FromTool)")
	// ErrInsideChild: WithOwner or WithPool on a Middleware whose agent
	// runs inside a child, whose agents own Work in the child's scope.
	ErrInsideChild = errors.New("eino: option not allowed inside a child")
	// ErrNotPrepared: Release of a Middleware that New did not make.
	ErrNotPrepared = errors.New("eino: the Middleware was not made by New")
	// ErrReleased: RunUntilSettled, or a run, after Release.
	ErrReleased = errors.New("eino: the Middleware was released")
	// ErrNoChildMiddleware: the agent of a NewAgent child ran without an
	// agentwork Middleware among its Handlers, so it could take no
	// guidance, cancel or budget at its model requests.
	ErrNoChildMiddleware = errors.New("eino: the child agent does not carry agentwork's middleware (add eino.ChildMiddleware() to its Handlers)")
)

// Option configures New.
type Option interface{ apply(*config) }

type config struct {
	owner      work.Owner
	named      bool
	extraNames []string
	pool       *work.Budget
	traced     bool                // WithoutToolSpans
	mw         []middleware.Option // WithDefaultAutoBackground, for middleware.PrepareWith
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithOwner sets the coordinator's owner id (default: a new random one),
// so that a restarted coordinator sees its Work on a durable engine. An
// owner id names one live coordinator per engine instance
// (middleware.ClaimOwner, the registry every adapter shares): the
// Middleware claims it at its first run, and while another live
// coordinator (a Middleware or a langchaingo Kit) has the id on the same
// engine that run fails with middleware.ErrOwnerInUse (two coordinators
// of one owner would see, cancel and release each other's Work). Release
// frees the id.
func WithOwner(id string) Option {
	return optionFunc(func(c *config) {
		if id != "" {
			c.owner, c.named = work.NewOwner(id), true
		}
	})
}

// WithPromptTools names tools the agent also gets from elsewhere; a
// "work" among them fails preparation when the work tool is added.
func WithPromptTools(names ...string) Option {
	return optionFunc(func(c *config) { c.extraNames = append(c.extraNames, names...) })
}

// WithPool gives the coordinator a pool: the total turns, tool calls and
// tokens all the children it starts may reserve (work.Engine.SetPool),
// set at its first run. A start the pool cannot cover is refused with the
// error object code budget_exhausted before any Work exists.
func WithPool(b work.Budget) Option {
	return optionFunc(func(c *config) { c.pool = &b })
}

// WithDefaultAutoBackground gives every Backgroundable child without its
// own WithAutoBackground that bound (middleware.WithAutoBackground: an
// opt-in departure from the crux contract); foreground children are not
// affected. A bound of zero or less fails preparation
// (middleware.ErrInvalidBackgroundOption).
func WithDefaultAutoBackground(after time.Duration) Option {
	return optionFunc(func(c *config) { c.mw = append(c.mw, middleware.WithAutoBackground(after)) })
}

// WithoutToolSpans turns agentwork's execute_tool spans off for the
// calls of the tools this Middleware prepares (its children and the work
// tool): use it when an Eino callbacks.Handler (an OpenTelemetry one, or
// another tracer's) already makes an execute_tool span for every tool
// call, so that one call has one span. The handler's span, which Eino
// puts on the tool's context, takes agentwork's place
// (observe.WithToolCallTraced): it gets agentwork's attributes
// (agentwork.work.target; agentwork.action and agentwork.work.id), a
// launch's link to its Work's invoke_agent span, and a foreground agent
// child's invoke_agent span as its child. Metrics and logs are unchanged.
// Without a span-making handler the calls have no execute_tool span at
// all.
func WithoutToolSpans() Option {
	return optionFunc(func(c *config) { c.traced = true })
}

// New returns the coordinator middleware for one agent on sup (the
// in-process *work.Engine or another work.Engine). A nil sup makes
// every run that has children fail with middleware.ErrNilEngine.
func New(sup *work.Engine, opts ...Option) *Middleware {
	m := &Middleware{BaseChatModelAgentMiddleware: &adk.BaseChatModelAgentMiddleware{}, sup: sup}
	for _, o := range opts {
		if o != nil {
			o.apply(&m.cfg)
		}
	}
	m.owner = m.cfg.owner
	if m.owner.IsZero() {
		m.owner = work.NewOwner("agent-" + randomHex())
	}
	if m.cfg.pool != nil {
		if err := middleware.CheckBudget(*m.cfg.pool); err != nil {
			m.prepErr = fmt.Errorf("eino: WithPool: %w", err)
		}
	}
	if sup == nil {
		m.prepErr = middleware.ErrNilEngine
	}
	return m
}

// ChildMiddleware returns the middleware of a child agent: add it to the
// Handlers of a ChatModelAgent that runs as an agent child (FromAgent,
// NewAgent). It has no engine and no owner; it delivers guidance, stops
// the child at its next model request when its Work is cancelled, keeps
// its budgets and adds emit_update (see Middleware). Outside a child run
// it does nothing.
func ChildMiddleware() *Middleware {
	return &Middleware{BaseChatModelAgentMiddleware: &adk.BaseChatModelAgentMiddleware{}}
}

// Owner returns the coordinator's owner (the zero Owner for a child's
// middleware).
func (m *Middleware) Owner() work.Owner {
	if m == nil || m.sup == nil {
		return work.Owner{}
	}
	return m.owner
}

// Engine returns the engine (nil for a child's middleware).
func (m *Middleware) Engine() *work.Engine {
	if m == nil {
		return nil
	}
	return m.sup
}

// Release cancels the coordinator's unfinished Work, forgets all of it and
// the owner, and frees its WithOwner id (middleware.Kit.Release). Call it
// when the agent is done. Afterwards its child tools answer with code
// released, the work tool's id actions with {"status":"not_found"}, and a
// new run fails with ErrReleased. A second Release returns nil; a
// Middleware without an engine returns ErrNotPrepared. A WithOwner
// Middleware that never ran releases the owner's Work on the engine only
// when no other live coordinator has the id (else it returns
// middleware.ErrOwnerInUse and releases nothing).
func (m *Middleware) Release() error {
	if m == nil || m.sup == nil {
		return ErrNotPrepared
	}
	m.mu.Lock()
	if m.prepErr == ErrReleased {
		m.mu.Unlock()
		return nil
	}
	m.prepErr = ErrReleased
	sets, claim := m.sets, m.claim
	m.sets, m.current, m.base, m.claim = nil, nil, nil, nil
	m.mu.Unlock()
	defer claim.Release()
	var err error
	for _, s := range sets {
		if e := s.Release(); e != nil && err == nil {
			err = e
		}
	}
	if len(sets) == 0 {
		if m.cfg.named && claim == nil {
			// Never run: release the owner's Work only when no other live
			// coordinator has the id.
			if claim, err = middleware.ClaimOwner(m.sup, m.owner.ID()); err != nil {
				return fmt.Errorf("eino: Release: owner %q: %w", m.owner.ID(), err)
			}
			defer claim.Release()
		}
		ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
		defer cancel()
		err = m.sup.Release(ctx, m.owner)
	}
	return err
}

// Released reports whether Release was called.
func (m *Middleware) Released() bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.prepErr == ErrReleased
}

// BeforeAgent prepares the run's tools (see Middleware).
func (m *Middleware) BeforeAgent(ctx context.Context, rc *adk.ChatModelAgentContext) (context.Context, *adk.ChatModelAgentContext, error) {
	if ctx == nil {
		return ctx, rc, ErrNilContext
	}
	if rc == nil {
		return ctx, rc, nil
	}
	cr := childRunFrom(ctx)
	if cr != nil {
		cr.carried.Store(true)
	}
	var p *prepared
	if hasChildren(rc.Tools) {
		var err error
		if p, err = m.prepare(ctx, rc.Tools); err != nil {
			return ctx, rc, err
		}
		out := *rc
		out.Tools = p.tools
		rc = &out
	}
	if cr != nil && cr.updates {
		tools, err := withUpdateTool(ctx, rc.Tools)
		if err != nil {
			return ctx, rc, err
		}
		out := *rc
		out.Tools = tools
		rc = &out
	}
	// Always set: an agent run inside this one's tool call (an Eino agent
	// tool) must not see this run's preparation.
	return context.WithValue(ctx, preparedKey{}, p), rc, nil
}

// BeforeModelRewriteState is a child's model-request boundary: it adds
// the child's guidance (and the no-answer note) to its conversation, in
// order, and carries the boundary to WrapModel. Outside a child run it
// does nothing.
func (m *Middleware) BeforeModelRewriteState(ctx context.Context, state *adk.ChatModelAgentState, _ *adk.ModelContext) (context.Context, *adk.ChatModelAgentState, error) {
	b, notes, err := middleware.BeginRequest(ctx)
	if err != nil {
		return ctx, state, err
	}
	if !b.InChild() {
		return ctx, state, nil
	}
	if len(notes) > 0 && state != nil {
		out := *state
		out.Messages = append(state.Messages[:len(state.Messages):len(state.Messages)], userMessages(notes)...)
		state = &out
	}
	return context.WithValue(ctx, boundaryKey{}, b), state, nil
}

// WrapInvokableToolCall counts each tool call of a child's agent against
// its tool-call budget; a call beyond it is answered with
// middleware.ToolNotRun and not run. Outside a child run the endpoint is
// returned as it is.
func (m *Middleware) WrapInvokableToolCall(ctx context.Context, endpoint adk.InvokableToolCallEndpoint, _ *adk.ToolContext) (adk.InvokableToolCallEndpoint, error) {
	if _, ok := work.ExecutionFrom(ctx); !ok {
		return endpoint, nil
	}
	return func(ctx context.Context, args string, opts ...tool.Option) (string, error) {
		if !middleware.BeginToolCall(ctx) {
			return middleware.ToolNotRun, nil
		}
		return endpoint(ctx, args, opts...)
	}, nil
}

type preparedKey struct{}
type boundaryKey struct{}

func preparedFrom(ctx context.Context) *prepared {
	p, _ := ctx.Value(preparedKey{}).(*prepared)
	return p
}

func boundaryFrom(ctx context.Context) middleware.Boundary {
	b, _ := ctx.Value(boundaryKey{}).(middleware.Boundary)
	return b
}

func userMessages(texts []string) []*schema.Message {
	out := make([]*schema.Message, len(texts))
	for i, t := range texts {
		out[i] = schema.UserMessage(t)
	}
	return out
}
