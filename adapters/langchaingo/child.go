package langchaingo

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/memory"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// DefaultChildIterations bounds a child executor's iterations when its
// MaxIterations is zero or less, which only an agents.Executor built as a
// struct literal has: agents.NewExecutor already sets 5 (change it with
// agents.WithMaxIterations), and that limit is kept.
const DefaultChildIterations = 10

// Child is a child agent or long function as a langchaingo tool. Listed in
// Prepare's tools it is a foreground child (isolated, exact output); wrapped
// with Backgroundable it can also run in the background. Used as a tool
// outside Prepare it simply runs in the caller's context. The zero Child
// is not a child: its Call returns ErrZeroChild and Prepare refuses it.
type Child struct {
	name     string
	c        middleware.Child
	err      error  // a preparation error found when the child was built
	provider string // gen_ai.provider.name of the child's model, when known
}

var _ tools.Tool = (*Child)(nil)

// Name returns the child's tool name.
func (c *Child) Name() string {
	if c == nil {
		return ""
	}
	return c.name
}

// Description returns the child's description.
func (c *Child) Description() string {
	if c == nil {
		return ""
	}
	return c.c.Description
}

// Call runs the child directly, without isolation or telemetry (it is not
// prepared). It returns the child's Go error as langchaingo tools do, and
// ErrZeroChild for the zero Child and ErrJobNotPrepared for a job child
// (NewJob), which runs only on an engine.
func (c *Child) Call(ctx context.Context, input string) (string, error) {
	if c == nil || c.err == nil && c.c.Run == nil && c.c.Job == nil {
		return "", ErrZeroChild
	}
	if c.err != nil {
		return "", c.err
	}
	if c.c.Job != nil {
		return "", ErrJobNotPrepared
	}
	return c.c.Run(ctx, input)
}

// ChildOption configures a Child.
type ChildOption interface{ apply(*middleware.Child) }

type childOptionFunc func(*middleware.Child)

func (f childOptionFunc) apply(c *middleware.Child) { f(c) }

// WithSchema declares the JSON schema of the child's input object (an object
// schema; it may not declare run_in_background). Without it the child takes
// one string.
func WithSchema(schema map[string]any) ChildOption {
	return childOptionFunc(func(c *middleware.Child) { c.Schema = schema })
}

// WithValidate sets the check run on the child's input before any Work is
// accepted.
func WithValidate(fn func(input string) error) ChildOption {
	return childOptionFunc(func(c *middleware.Child) { c.Validate = fn })
}

// WithMaxResultBytes bounds the child's output size (middleware.Child's
// MaxResultBytes: it lowers the engine's limit, never raises it).
func WithMaxResultBytes(n int) ChildOption {
	return childOptionFunc(func(c *middleware.Child) { c.MaxResultBytes = n })
}

// WithMaxInputBytes bounds the child's input: what the model sends, in
// bytes (default middleware.DefaultMaxInputBytes, 1 MiB). A longer input,
// foreground or background, gets the error object with code
// input_too_large before any Work is accepted. A negative n fails Prepare.
func WithMaxInputBytes(n int) ChildOption {
	return childOptionFunc(func(c *middleware.Child) { c.MaxInputBytes = n })
}

// WithID sets the child's own id, reported as the Ref's targetId (default:
// its name).
func WithID(id string) ChildOption {
	return childOptionFunc(func(c *middleware.Child) { c.ID = id })
}

// WithAutoBackground moves a call of the child made without
// run_in_background to the background when it is still unfinished after
// the bound (middleware.Child.AutoBackground: an opt-in departure from the
// crux contract). Only a Backgroundable child may have it, and the bound
// must be positive: Prepare fails otherwise
// (middleware.ErrInvalidBackgroundOption).
func WithAutoBackground(after time.Duration) ChildOption {
	return childOptionFunc(func(c *middleware.Child) { c.AutoBackground = &middleware.AutoBackground{After: after} })
}

// WithBackgroundDefault makes an absent run_in_background mean true for
// the child (middleware.Child.BackgroundByDefault: an opt-in departure
// from the crux contract); "run_in_background": false still runs it in the
// foreground. Only a Backgroundable child may have it.
func WithBackgroundDefault() ChildOption {
	return childOptionFunc(func(c *middleware.Child) { c.BackgroundByDefault = true })
}

func newChild(name, description string, kind observe.Kind, run func(context.Context, string) (string, error), opts []ChildOption) *Child {
	c := middleware.Child{Description: description, Kind: kind, Run: run}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	return &Child{name: name, c: c, provider: providerFrom(opts)}
}

// NewFunction returns a function child: fn gets the child's input (the
// string, or the input object's JSON when WithSchema is set) and its
// context is cancelled on cancel and at the maximum duration. Function
// children take no guidance.
func NewFunction(name, description string, fn func(ctx context.Context, input string) (string, error), opts ...ChildOption) *Child {
	return newChild(name, description, work.KindFunction, fn, opts)
}

// NewAgent returns a child agent whose executor build makes fresh for each
// run (the safest form: runs share nothing). The child's input is passed as
// the executor's "input" value and its "output" value is the child's
// output. build's ctx is the child's own; Prepare with that ctx gives the
// child background children of its own, one nesting level deeper. A nil
// build makes Prepare fail with ErrInvalidChild, which Call returns.
func NewAgent(name, description string, build func(ctx context.Context) (*agents.Executor, error), opts ...ChildOption) *Child {
	var updates bool // WithUpdates: set before any run
	run := func(ctx context.Context, input string) (string, error) {
		exec, err := build(ctx)
		if err != nil {
			return "", err
		}
		if exec == nil {
			return "", errors.New("langchaingo: child builder returned a nil executor")
		}
		prepared, err := prepareChildExecutor(exec, updates)
		if err != nil {
			return "", err
		}
		return runExecutor(ctx, prepared, input, updates)
	}
	c := newChild(name, description, work.KindAgent, run, opts)
	updates = c.c.Updates != nil
	if build == nil {
		c.err = prepErr(ErrInvalidChild, "NewAgent %q: nil build", name)
	}
	return c
}

// FromTool returns a function child that runs t: any existing tool (an MCP
// tool, a long HTTP call) becomes a child that Backgroundable can run in the
// background, without rewriting it. The child's name and description are
// t's; t.Call gets the child's input (the string, or the input object's
// JSON when WithSchema is set) on the child's context, which is cancelled
// on cancel and at the maximum duration; its Go error fails the child
// (the model sees only the failed state, never the error's text). A nil t
// (or a typed nil) makes Prepare fail.
func FromTool(t tools.Tool, opts ...ChildOption) *Child {
	if t == nil || isNil(t) {
		return &Child{name: "", err: prepErr(ErrInvalidChild, "FromTool: nil tool")}
	}
	c := NewFunction(t.Name(), t.Description(), t.Call, opts...)
	return c
}

// FromExecutor returns a child agent that runs exec for each call. Each run
// uses a copy of exec whose agent's model is wrapped (guidance, cooperative
// cancel) and whose memory, if any, starts empty (langchaingo's buffers keep
// their configuration; other memories become a conversation buffer), so
// runs never share history. The agent must be one of langchaingo's
// OneShotZeroAgent, ConversationalAgent (with an LLMChain) or
// OpenAIFunctionsAgent; for any other agent wrap its model with WrapModel
// yourself, or use NewAgent.
//
// An OpenAIFunctionsAgent with tools on a client that sends no tools
// (langchaingo v0.1.14's llms/ollama) makes Prepare fail with
// ErrToolsNotSent.
func FromExecutor(name, description string, exec *agents.Executor, opts ...ChildOption) *Child {
	var cache preparedCache
	var updates bool // WithUpdates: set before any run
	run := func(ctx context.Context, input string) (string, error) {
		prepared, err := cache.executor(exec, updates)
		if err != nil {
			return "", err
		}
		return runExecutor(ctx, prepared, input, updates)
	}
	c := newChild(name, description, work.KindAgent, run, opts)
	updates = c.c.Updates != nil
	if exec == nil {
		c.err = prepErr(ErrInvalidChild, "FromExecutor: nil executor")
	} else if fa, ok := exec.Agent.(*agents.OpenAIFunctionsAgent); ok && len(fa.Tools) > 0 && fa.LLM != nil && !sendsTools(fa.LLM) {
		c.err = errToolsNotSent(fa.LLM)
	} else if n := updateCollision(exec.Agent.GetTools()); updates && n != "" {
		c.err = errUpdateCollision(n)
	}
	if c.provider == "" && exec != nil {
		c.provider = ProviderName(agentModel(exec.Agent))
	}
	return c
}

// prepareChildExecutor copies exec with a wrapped model, fresh memory and
// bounded iterations, and with emit_update when the child declares
// updates.
func prepareChildExecutor(exec *agents.Executor, updates bool) (*agents.Executor, error) {
	cp := *exec
	if cp.MaxIterations <= 0 {
		cp.MaxIterations = DefaultChildIterations
	}
	cp.Memory = freshMemory(cp.Memory)
	a, err := prepareChildAgent(cp.Agent, updates)
	if err != nil {
		return nil, err
	}
	cp.Agent = a
	return &cp, nil
}

// prepareChildAgent returns a copy of a known agent with a wrapped model
// and budgeted tools, emit_update among them when updates is set (an
// authored tool of that name is an error).
func prepareChildAgent(a agents.Agent, updates bool) (agents.Agent, error) {
	a = wrapAgentModel(a)
	if updates {
		var err error
		if a, err = withUpdateTool(a); err != nil {
			return nil, err
		}
	}
	if len(a.GetTools()) > 0 {
		a = budgetAgentTools(a)
	}
	return a, nil
}

// preparedCache keeps a child executor's prepared agent between runs, so
// that its wrapped model (and the model's cached tool definitions) lives as
// long as the child: the agent is stateless between runs (each run gets a
// fresh executor copy and memory). It is rebuilt when exec.Agent changes.
type preparedCache struct {
	p atomic.Pointer[preparedAgent]
}

type preparedAgent struct {
	src   agentPrint
	agent agents.Agent
}

// agentPrint is what prepareChildAgent reads of one of langchaingo's three
// agents: the agent, its model or chain, and its tool list.
type agentPrint struct {
	agent     agents.Agent
	model     any
	tools     *tools.Tool
	toolCount int
}

// fingerprint returns a's print, and false for an agent the adapter does
// not wrap (it is used as it is).
func fingerprint(a agents.Agent) (agentPrint, bool) {
	p := agentPrint{agent: a}
	var ts []tools.Tool
	switch ag := a.(type) {
	case *agents.OpenAIFunctionsAgent:
		p.model, ts = ag.LLM, ag.Tools
	case *agents.OneShotZeroAgent:
		p.model, ts = ag.Chain, ag.Tools
	case *agents.ConversationalAgent:
		p.model, ts = ag.Chain, ag.Tools
	default:
		return p, false
	}
	if p.model != nil && !reflect.TypeOf(p.model).Comparable() {
		return p, false
	}
	if len(ts) > 0 {
		p.tools, p.toolCount = &ts[0], len(ts)
	}
	return p, true
}

// executor returns a run's copy of exec: the cached prepared agent, fresh
// memory and bounded iterations. The agent is prepared again when exec's
// agent, its model (or chain) or its tool list changed.
func (c *preparedCache) executor(exec *agents.Executor, updates bool) (*agents.Executor, error) {
	fp, ok := fingerprint(exec.Agent)
	if !ok {
		return prepareChildExecutor(exec, updates)
	}
	p := c.p.Load()
	if p == nil || p.src != fp {
		a, err := prepareChildAgent(exec.Agent, updates)
		if err != nil {
			return nil, err
		}
		p = &preparedAgent{src: fp, agent: a}
		c.p.Store(p)
	}
	cp := *exec
	if cp.MaxIterations <= 0 {
		cp.MaxIterations = DefaultChildIterations
	}
	cp.Memory = freshMemory(cp.Memory)
	cp.Agent = p.agent
	return &cp, nil
}

// freshMemory returns memory like m with an empty history, so that runs
// never share one. langchaingo's buffers keep their configuration (memory
// key, prefixes, input and output keys, window size, token limit): a
// prompt that reads a custom memory key still finds it. Any other memory
// becomes a plain conversation buffer.
func freshMemory(m schema.Memory) schema.Memory {
	switch mem := m.(type) {
	case nil:
		return memory.NewSimple()
	case memory.Simple, *memory.Simple:
		return m
	case *memory.ConversationBuffer:
		cp := *mem
		cp.ChatHistory = memory.NewChatMessageHistory()
		return &cp
	case *memory.ConversationWindowBuffer:
		cp := *mem
		cp.ChatHistory = memory.NewChatMessageHistory()
		return &cp
	case *memory.ConversationTokenBuffer:
		cp := *mem
		cp.ChatHistory = memory.NewChatMessageHistory()
		return &cp
	}
	return memory.NewConversationBuffer()
}

// wrapAgentModel returns a copy of a known agent whose model is wrapped with
// WrapModel; other agents are returned unchanged.
func wrapAgentModel(a agents.Agent) agents.Agent {
	switch ag := a.(type) {
	case *agents.OpenAIFunctionsAgent:
		cp := *ag
		cp.LLM = WrapModel(cp.LLM)
		return &cp
	case *agents.OneShotZeroAgent:
		cp := *ag
		cp.Chain = wrapChain(cp.Chain)
		return &cp
	case *agents.ConversationalAgent:
		cp := *ag
		cp.Chain = wrapChain(cp.Chain)
		return &cp
	}
	return a
}

func wrapChain(c chains.Chain) chains.Chain {
	if lc, ok := c.(*chains.LLMChain); ok {
		cp := *lc
		cp.LLM = WrapModel(cp.LLM)
		return &cp
	}
	return c
}

// runExecutor runs a prepared child executor. A child that declares
// updates gets its run's tool-call ids in ctx, for emit_update.
func runExecutor(ctx context.Context, exec *agents.Executor, input string, updates bool) (string, error) {
	final := &finalCapture{}
	ctx = context.WithValue(ctx, finalKey{}, final)
	if updates {
		ctx = context.WithValue(ctx, runIDsKey{}, &callIDs{})
	}
	out, err := chains.Call(ctx, exec, map[string]any{"input": input})
	if err != nil && final.set && ctx.Err() == nil {
		// The budget ran out and the model gave its final answer, which
		// the agent could not take as one (or kept on): it is the output.
		return final.text, nil
	}
	if err != nil {
		return "", err
	}
	for _, key := range exec.GetOutputKeys() {
		if s, ok := out[key].(string); ok {
			return s, nil
		}
	}
	return "", fmt.Errorf("langchaingo: child executor returned no string output")
}

// BackgroundChild is a backgroundable child as a langchaingo tool, made by
// Backgroundable: a frozen, inert marker that becomes executable only in
// Prepare's tools. Called directly it does nothing and returns an error
// object.
type BackgroundChild struct {
	name string
	bg   middleware.BackgroundChild
	desc string
	err  error
	info observe.TargetInfo
}

var _ tools.Tool = BackgroundChild{}

// Backgroundable marks child as backgroundable.
func Backgroundable(child *Child) BackgroundChild {
	if child == nil {
		return BackgroundChild{err: prepErr(ErrInvalidChild, "Backgroundable: nil child")}
	}
	return BackgroundChild{name: child.name, bg: middleware.Backgroundable(child.c), desc: child.c.Description, err: child.err,
		info: targetInfo(child.name, child.c, child.provider)}
}

// Name returns the child's tool name.
func (b BackgroundChild) Name() string { return b.name }

// Description returns the child's description.
func (b BackgroundChild) Description() string { return b.desc }

// Call does nothing: a BackgroundChild runs only once prepared.
func (b BackgroundChild) Call(context.Context, string) (string, error) {
	return middleware.ErrorObject{Code: "not_prepared", Message: "this child is not prepared: pass it to langchaingo.Prepare"}.JSON(), nil
}
