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
	"github.com/agentwork/agentwork/work/observe"
)

// Child is a child agent, Eino tool or long function as an Eino tool.
// Listed among a ChatModelAgent's tools next to a Middleware it is a
// foreground child (isolated, exact output); wrapped with Backgroundable
// it can also run in the background. Used as a tool without a Middleware
// it simply runs in the caller's context. The zero Child is not a child:
// its InvokableRun returns ErrZeroChild and preparation refuses it.
type Child struct {
	name     string
	c        middleware.Child
	err      error
	provider string

	info     sync.Once // Info's answer, computed once (a Child does not change)
	toolInfo *schema.ToolInfo
	infoErr  error
}

var _ tool.InvokableTool = (*Child)(nil)

// Name returns the child's tool name.
func (c *Child) Name() string {
	if c == nil {
		return ""
	}
	return c.name
}

// Info describes the child as a tool: its name, description and input
// schema (without run_in_background: the prepared tool adds it).
func (c *Child) Info(context.Context) (*schema.ToolInfo, error) {
	if c == nil {
		return nil, ErrZeroChild
	}
	c.info.Do(func() { c.toolInfo, c.infoErr = toolInfo(c.name, c.c.Description, inputSchema(c.c.Schema)) })
	return c.toolInfo, c.infoErr
}

// InvokableRun runs the child directly, without isolation or telemetry
// (it is not prepared), returning its Go error as Eino tools do.
func (c *Child) InvokableRun(ctx context.Context, args string, _ ...tool.Option) (string, error) {
	if err := c.check(); err != nil {
		return "", err
	}
	if c.c.Job != nil {
		return "", ErrJobNotPrepared
	}
	return c.c.Run(ctx, args)
}

// Kind returns the child's kind: work.KindAgent for an agent child
// (FromAgent of a ChatModelAgent that carries agentwork's middleware,
// NewAgent), else work.KindFunction (the zero Child's too).
func (c *Child) Kind() observe.Kind {
	if c == nil || c.c.Kind == 0 {
		return work.KindFunction
	}
	return c.c.Kind
}

// Run runs the child's body once on input (the child's input string, or
// its input object's JSON when WithSchema is set) in ctx, as an engine
// runs it: it is what a durable runner's worker registers for the
// child's label (temporal.Child{Kind: c.Kind(), Run: c.Run}, the same for
// restate.Child), so that the Work the coordinator starts runs it on the
// worker, with its guidance, cancel and budget taken at its model
// requests there. A job child (NewJob) has no body: Run returns
// ErrJobNotPrepared; the zero Child ErrZeroChild.
func (c *Child) Run(ctx context.Context, input string) (string, error) {
	if err := c.check(); err != nil {
		return "", err
	}
	if c.c.Job != nil {
		return "", ErrJobNotPrepared
	}
	return c.c.Run(ctx, input)
}

func (c *Child) check() error {
	switch {
	case c == nil || c.err == nil && c.c.Run == nil && c.c.Job == nil:
		return ErrZeroChild
	case c.err != nil:
		return c.err
	}
	return nil
}

// inputSchema is the schema the child's tool shows before preparation.
func inputSchema(s map[string]any) map[string]any {
	if s != nil {
		return s
	}
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{"input": map[string]any{"type": "string", "description": "The task for the child."}},
		"required":   []any{"input"},
	}
}

// targetInfo is what telemetry learns of the child at each call.
func (c *Child) targetInfo() observe.TargetInfo {
	id := c.c.ID
	if id == "" {
		id = c.name
	}
	info := observe.TargetInfo{Description: c.c.Description}
	if c.c.Kind == work.KindAgent {
		info.AgentID, info.Provider = id, c.provider
	}
	return info
}

// ChildOption configures a Child.
type ChildOption interface{ apply(*Child) }

type childOptionFunc func(*Child)

func (f childOptionFunc) apply(c *Child) { f(c) }

func newChild(name, description string, kind observe.Kind, run func(context.Context, string) (string, error), opts []ChildOption) *Child {
	c := &Child{name: name, c: middleware.Child{Description: description, Kind: kind, Run: run}}
	for _, o := range opts {
		if o != nil {
			o.apply(c)
		}
	}
	return c
}

// WithSchema declares the JSON schema of the child's input object (an
// object schema; it may not declare run_in_background). Without it the
// child takes one string, asked for as {"input": "..."}.
func WithSchema(s map[string]any) ChildOption {
	return childOptionFunc(func(c *Child) { c.c.Schema = s })
}

// WithValidate sets the check run on the child's input before any Work
// is accepted (middleware.Child.Validate).
func WithValidate(fn func(input string) error) ChildOption {
	return childOptionFunc(func(c *Child) { c.c.Validate = fn })
}

// WithMaxResultBytes lowers the engine's output limit for this child.
func WithMaxResultBytes(n int) ChildOption {
	return childOptionFunc(func(c *Child) { c.c.MaxResultBytes = n })
}

// WithMaxInputBytes bounds the child's raw input (default
// middleware.DefaultMaxInputBytes): over it the call gets the error object
// with code input_too_large before anything starts.
func WithMaxInputBytes(n int) ChildOption {
	return childOptionFunc(func(c *Child) { c.c.MaxInputBytes = n })
}

// WithID sets the child's own id, reported as the Ref's targetId
// (default: its name).
func WithID(id string) ChildOption {
	return childOptionFunc(func(c *Child) { c.c.ID = id })
}

// WithBudget bounds each run of the child (work.Budget: turns, tool
// calls, tokens from the model's reported usage, duration); zero fields
// inherit the engine's defaults. When turns, tool calls or tokens run
// out, an agent child's model gets one final request with no tools and
// an instruction to answer now; that answer is its output, a partial
// result.
func WithBudget(b work.Budget) ChildOption {
	return childOptionFunc(func(c *Child) { c.c.Budget = b })
}

// WithFailOnBudget makes an exhausted budget fail the child (class
// budget_exhausted) instead of asking for a final answer.
func WithFailOnBudget() ChildOption {
	return childOptionFunc(func(c *Child) { c.c.FailOnBudget = true })
}

// WithApproval makes each background launch of the child wait, queued,
// for the application's approval (work.Engine.Approve); a denial or no answer
// within timeout (0: 24 hours) ends it cancelled.
// Only a backgroundable child can need approval; a foreground call of one
// is refused with code invalid_child_input.
func WithApproval(timeout time.Duration) ChildOption {
	return childOptionFunc(func(c *Child) { c.c.NeedsApproval, c.c.ApprovalTimeout = true, timeout })
}

// WithUpdates declares that the child reports bounded, ordered updates
// and may ask a question (work.UpdatePolicy; zero fields take the
// defaults). An agent child's agent gets the emit_update tool on each run
// (an authored tool of that name fails the run with
// middleware.ErrUpdateToolName); a function child reports with
// work.ReportUpdate.
func WithUpdates(p work.UpdatePolicy) ChildOption {
	return childOptionFunc(func(c *Child) { c.c.Updates = &p })
}

// ReportUpdates hands the child's updates to the coordinator too, on
// RunUntilSettled's next resume, as a user message of untrusted child
// content (middleware.UpdatesBlock); pred, when not nil, chooses which.
// The child must also declare updates (WithUpdates).
func ReportUpdates(pred func(work.Update) bool) ChildOption {
	return childOptionFunc(func(c *Child) { c.c.ReportUpdates, c.c.UpdateFilter = true, pred })
}

// WithAutoBackground moves a call of the child made without
// run_in_background to the background when it is still unfinished after
// the bound (middleware.Child.AutoBackground: an opt-in departure from the
// crux contract). Only a Backgroundable child may have it, and the bound
// must be positive: preparation fails otherwise
// (middleware.ErrInvalidBackgroundOption).
func WithAutoBackground(after time.Duration) ChildOption {
	return childOptionFunc(func(c *Child) { c.c.AutoBackground = &middleware.AutoBackground{After: after} })
}

// WithBackgroundDefault makes an absent run_in_background mean true for
// the child (middleware.Child.BackgroundByDefault: an opt-in departure
// from the crux contract); "run_in_background": false still runs it in
// the foreground. Only a Backgroundable child may have it.
func WithBackgroundDefault() ChildOption {
	return childOptionFunc(func(c *Child) { c.c.BackgroundByDefault = true })
}

// WithProvider names the child agent's model provider for telemetry
// (gen_ai.provider.name on its invoke_agent span), where it cannot be
// derived from the agent's model (NewAgent, which builds its agent per
// run, or a model ProviderNameOf does not know); an agent child with
// neither carries telemetry.ProviderUnknown ("_OTHER").
func WithProvider(name string) ChildOption {
	return childOptionFunc(func(c *Child) { c.provider = name })
}

// NewFunction returns a function child: fn gets the child's input (the
// string, or the input object's JSON when WithSchema is set) on a context
// cancelled on cancel and at the maximum duration. Function children take
// no guidance.
func NewFunction(name, description string, fn func(ctx context.Context, input string) (string, error), opts ...ChildOption) *Child {
	c := newChild(name, description, work.KindFunction, fn, opts)
	if fn == nil {
		c.err = fmt.Errorf("%w: NewFunction %q: nil function", ErrInvalidChild, name)
	}
	return c
}

// FromTool returns a function child that runs an Eino tool: any existing
// InvokableTool (an MCP tool, a long HTTP call) becomes a child that
// Backgroundable can run in the background. Its name, description and
// input schema are the tool's; its Go error fails the child (the model
// sees only the failed state).
func FromTool(t tool.InvokableTool, opts ...ChildOption) *Child {
	if t == nil || isNil(t) {
		return &Child{err: fmt.Errorf("%w: FromTool: nil tool", ErrInvalidChild)}
	}
	info, err := t.Info(context.Background())
	if err != nil || info == nil {
		return &Child{err: fmt.Errorf("%w: FromTool: Info: %v", ErrInvalidChild, err)}
	}
	run := func(ctx context.Context, input string) (string, error) { return t.InvokableRun(ctx, input) }
	var s map[string]any
	if info.ParamsOneOf != nil {
		js, err := info.ParamsOneOf.ToJSONSchema()
		if err == nil && js != nil {
			s, _ = schemaMap(js)
		}
	}
	c := newChild(info.Name, info.Desc, work.KindFunction, run, append([]ChildOption{WithSchema(s)}, opts...))
	return c
}

// ErrJobNotPrepared: InvokableRun of a job child (NewJob) outside a
// prepared agent: a job runs on an engine.
var ErrJobNotPrepared = errors.New("eino: a job child runs on an engine: list it among a prepared agent's tools")

// NewJob returns a function child that is an external job at another
// service (work.Job: submit, then await polled with backoff, holding no
// goroutine or running slot between polls).
func NewJob(name, description string, job work.Job, opts ...ChildOption) *Child {
	c := newChild(name, description, work.KindFunction, nil, opts)
	c.c.Job = &job
	return c
}

// BackgroundChild is a backgroundable child as an Eino tool, made by
// Backgroundable: a frozen, inert marker that becomes executable only
// among the tools of an agent with a Middleware. Run directly it does
// nothing and answers an error object. Its zero value is not a child
// (preparation refuses it). It is comparable: the same marker in the same
// place keeps a Middleware's preparation across runs.
type BackgroundChild struct{ b *backgroundChild }

type backgroundChild struct {
	name string
	desc string
	bg   middleware.BackgroundChild
	err  error
	info observe.TargetInfo
	s    map[string]any

	toolInfo *schema.ToolInfo // Info's answer, computed by Backgroundable
	infoErr  error
}

var _ tool.InvokableTool = BackgroundChild{}

// Backgroundable marks child as backgroundable.
func Backgroundable(child *Child) BackgroundChild {
	if child == nil {
		return BackgroundChild{&backgroundChild{err: fmt.Errorf("%w: Backgroundable: nil child", ErrInvalidChild)}}
	}
	err := child.check()
	b := &backgroundChild{name: child.name, desc: child.c.Description, bg: middleware.Backgroundable(child.c), err: err,
		info: child.targetInfo(), s: child.c.Schema}
	b.toolInfo, b.infoErr = toolInfo(b.name, b.desc, inputSchema(b.s))
	return BackgroundChild{b}
}

// Info describes the child as a tool.
func (b BackgroundChild) Info(context.Context) (*schema.ToolInfo, error) {
	if b.b == nil {
		return nil, ErrZeroChild
	}
	return b.b.toolInfo, b.b.infoErr
}

// InvokableRun does nothing: a BackgroundChild runs only once prepared.
func (b BackgroundChild) InvokableRun(context.Context, string, ...tool.Option) (string, error) {
	return middleware.ErrorObject{Code: "not_prepared", Message: "this child is not prepared: add eino.New(engine) to the agent's Handlers"}.JSON(), nil
}

// FromAgent returns a child that runs agent once per call, isolated: on a
// fresh context (none of the coordinator's values), with a fresh input of
// one user message (the child's input), none of the coordinator's
// messages or tools. Its output is the text of the agent's last message.
//
// A ChatModelAgent that carries an agentwork Middleware among its Handlers
// (ChildMiddleware, or a coordinator's New) is an agent child: it takes
// guidance (send) and is stopped cooperatively at its next model request
// when cancelled; its budgets and updates apply there. Any other
// adk.Agent is a function child: send is refused for it, as for
// functions. Name and description are the agent's own.
func FromAgent(agent adk.Agent, opts ...ChildOption) *Child {
	if agent == nil || isNil(agent) {
		return &Child{err: fmt.Errorf("%w: FromAgent: nil agent", ErrInvalidChild)}
	}
	if _, ok := agent.(*adk.ChatModelAgent); ok && layoutErr() != nil {
		return &Child{err: fmt.Errorf("FromAgent: %w", layoutErr())}
	}
	ctx := context.Background()
	kind := work.KindFunction
	if carriesMiddleware(agent) {
		kind = work.KindAgent
	}
	var c *Child
	run := func(ctx context.Context, input string) (string, error) {
		return runAgent(ctx, agent, input, c.c.Updates != nil, kind == work.KindAgent)
	}
	c = newChild(agent.Name(ctx), agent.Description(ctx), kind, run, opts)
	if c.provider == "" && kind == work.KindAgent {
		c.provider = agentProvider(agent)
	}
	if c.c.Updates != nil && kind != work.KindAgent {
		c.err = fmt.Errorf("%w: FromAgent %q: WithUpdates needs an agent child (a ChatModelAgent with agentwork's middleware) or a function child that reports with work.ReportUpdate", ErrInvalidChild, c.name)
	}
	return c
}

// NewAgent returns an agent child whose agent build makes for each run
// (runs share nothing). The agent must carry an agentwork Middleware
// among its Handlers (ChildMiddleware): a run whose agent does not fails
// with ErrNoChildMiddleware. build's ctx is the child's own: a Middleware
// made with New there prepares the child's own children, one nesting
// level deeper.
func NewAgent(name, description string, build func(ctx context.Context) (adk.Agent, error), opts ...ChildOption) *Child {
	var c *Child
	run := func(ctx context.Context, input string) (string, error) {
		agent, err := build(ctx)
		if err != nil {
			return "", err
		}
		if agent == nil || isNil(agent) {
			return "", errors.New("eino: the child builder returned a nil agent")
		}
		return runAgent(ctx, agent, input, c.c.Updates != nil, true)
	}
	c = newChild(name, description, work.KindAgent, run, opts)
	if build == nil {
		c.err = fmt.Errorf("%w: NewAgent %q: nil builder", ErrInvalidChild, name)
	}
	return c
}
