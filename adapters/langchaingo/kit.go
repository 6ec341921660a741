package langchaingo

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// Kit is one coordinator agent instance's prepared tools and model. Build
// the agent from Tools and Model. It is safe for concurrent use. The zero
// Kit has no tools, no model (its Model's GenerateContent returns
// ErrZeroModel) and the zero Owner; its Release and RunUntilSettled return
// ErrNotPrepared.
type Kit struct {
	owned   *middleware.OwnerClaim // the registry entry of a WithOwner id, or nil
	sup     *work.Engine
	set     *middleware.Kit
	model   *Model
	tools   []tools.Tool
	schemas map[string]map[string]any // upper-cased tool name -> real schema
	ids     *callIDs
	// resume is the updates block of the run RunUntilSettled is resuming
	// (settle_updates.go), nil outside one.
	resume atomic.Pointer[resumeBlock]
}

// Preparation errors. Prepare's errors wrap one of them, one of
// middleware's (middleware.ErrInvalidSchema, ...), ErrToolsNotSent, or the
// engine's refusal as it returned it (a closed engine: work.ErrClosed):
// test with errors.Is.
var (
	// ErrNilContext: Prepare, Retrofit, RunUntilSettled or a Model's
	// GenerateContent or Call got a nil context.Context.
	ErrNilContext = errors.New("langchaingo: nil context (pass context.Background() or the request's context)")
	// ErrNilModel: Prepare got a nil model.
	ErrNilModel = errors.New("langchaingo: nil model")
	// ErrInvalidTool: a tool is nil, or two tools' names are equal or
	// differ only in case. (A tool named "work" in any case while the work
	// tool is added is middleware.ErrWorkToolName.)
	ErrInvalidTool = errors.New("langchaingo: invalid tool")
	// ErrInsideChild: WithOwner or WithPool given to Prepare inside a
	// child, whose agents own Work in the child's own scope.
	ErrInsideChild = errors.New("langchaingo: option not allowed inside a child")
	// ErrOwnerInUse: another live coordinator (a Kit, or another
	// adapter's) has the same WithOwner id on the same engine instance
	// (middleware.ErrOwnerInUse, middleware.ClaimOwner).
	ErrOwnerInUse = middleware.ErrOwnerInUse
	// ErrNotPrepared: a method of a Kit that Prepare did not make (the
	// zero Kit).
	ErrNotPrepared = errors.New("langchaingo: the Kit was not made by Prepare")
	// ErrZeroModel: GenerateContent or Call of a Model that neither
	// WrapModel nor Prepare made (the zero or nil Model, also the zero
	// Kit's Model).
	ErrZeroModel = errors.New("langchaingo: zero Model (build it with WrapModel or Prepare)")
	// ErrReleased: RunUntilSettled of a Kit after its Release.
	ErrReleased = errors.New("langchaingo: the Kit was released")
	// ErrZeroChild: a Child that no constructor made (the zero Child).
	ErrZeroChild = errors.New("langchaingo: zero Child (build it with NewFunction, NewJob, NewAgent, FromTool or FromExecutor)")
	// ErrInvalidChild: a child built from nothing (FromTool of a nil
	// tool, FromExecutor of a nil executor, NewAgent of a nil build,
	// Backgroundable of a nil child).
	ErrInvalidChild = errors.New("langchaingo: invalid child")
	// ErrInvalidChildName: a child's name is not a tool name providers
	// accept (^[a-zA-Z0-9_-]{1,64}$, as OpenAI and Anthropic require).
	ErrInvalidChildName = middleware.ErrInvalidChildName
	// ErrNegativeBudget: a WithBudget or WithPool budget with a negative
	// field.
	ErrNegativeBudget = middleware.ErrNegativeBudget
)

// prepError is a preparation error: its own message, and the sentinel it
// is an instance of.
type prepError struct {
	msg  string
	kind error
}

func (e *prepError) Error() string { return e.msg }
func (e *prepError) Unwrap() error { return e.kind }

func prepErr(kind error, format string, args ...any) error {
	return &prepError{msg: fmt.Sprintf(format, args...), kind: kind}
}

// Option configures Prepare.
type Option interface{ apply(*kitConfig) }

type kitConfig struct {
	owner      work.Owner
	named      bool // the owner is WithOwner's
	extraNames []string
	pool       *work.Budget
	mw         []middleware.Option // passed to middleware.PrepareWith
}

type kitOptionFunc func(*kitConfig)

func (f kitOptionFunc) apply(c *kitConfig) { f(c) }

// WithOwner sets the top-level owner identity (default: a new random one).
// Use it to give a long-lived agent instance a stable name. Inside a child
// (ctx is a child's) the owner is always the child's own scope, and
// WithOwner fails preparation.
//
// An owner id names one live coordinator per engine instance
// (middleware.ClaimOwner, the registry every adapter shares: an Eino
// Middleware with the id counts too): while a Kit with id is live (not
// released), Prepare with the same id on the same engine fails with
// ErrOwnerInUse (two coordinators of one owner would see, cancel and
// release each other's Work). After that Kit's Release the id can be
// prepared again: Release frees the id. The registry keeps a small token
// per live id, never the Kit: a Kit dropped without Release is collected
// with its middleware Kit, but its id stays taken on that engine until the engine
// goes too (a *work.Engine is held weakly and its ids are forgotten
// when it is collected; another engine is held until Release, so release
// every WithOwner Kit of such an engine). That is how a coordinator that
// restarts keeps seeing its Work on a durable engine: a new process has a
// new engine instance, and its Kit with the same id sees the Work the old
// process started. (An engine whose dynamic type is not comparable cannot
// be told apart from another and is not checked.)
func WithOwner(id string) Option {
	return kitOptionFunc(func(c *kitConfig) {
		if id != "" {
			c.owner, c.named = work.NewOwner(id), true
		}
	})
}

// WithPromptTools names tools the agent also gets from elsewhere (its
// resolved prompt); a "work" among them fails preparation.
func WithPromptTools(names ...string) Option {
	return kitOptionFunc(func(c *kitConfig) { c.extraNames = append(c.extraNames, names...) })
}

// WithDefaultAutoBackground gives every Backgroundable child without its
// own WithAutoBackground that bound (middleware.WithAutoBackground: an
// opt-in departure from the crux contract); foreground children are not
// affected. A bound of zero or less fails Prepare
// (middleware.ErrInvalidBackgroundOption).
func WithDefaultAutoBackground(after time.Duration) Option {
	return kitOptionFunc(func(c *kitConfig) { c.mw = append(c.mw, middleware.WithAutoBackground(after)) })
}

// Prepare prepares a coordinator's tools and model on sup (the in-process
// *work.Engine or another work.Engine). ts holds ordinary tools
// (passed through untouched), Children (foreground children) and
// Backgrounds (backgroundable children); the work tool is added when any is
// a BackgroundChild. When ctx is a child's, the Kit's owner is that child's own
// scope, one nesting level deeper (the depth limit applies).
//
// Prepare fails (each error is one of this package's sentinels,
// middleware's, ErrToolsNotSent or the engine's refusal, for errors.Is) on
// a nil ctx (ErrNilContext), a nil model (ErrNilModel), a nil engine
// (middleware.ErrNilEngine), a zero or closed engine (a closed one:
// work.ErrClosed), a WithOwner id another live Kit has on this engine
// (ErrOwnerInUse), a child name providers refuse (ErrInvalidChildName), a
// negative field in WithBudget or WithPool (ErrNegativeBudget), on a nil
// tool (a nil interface or a typed nil such as a
// nil *T), on two tools whose names differ only in case (langchaingo's
// executor looks tools up case-insensitively), on a tool named "work" in
// any case (or a "work" among WithPromptTools) when the work tool is added
// (middleware.ErrWorkToolName),
// on a child built from an executor whose function-calling agent runs on a
// client that sends no tools (ErrToolsNotSent), and on the errors of
// middleware.Prepare (a schema that declares run_in_background; a
// WithAutoBackground or WithBackgroundDefault on a child that is not
// Backgroundable, or a bound of zero or less:
// middleware.ErrInvalidBackgroundOption). An
// ordinary tool named "work" is allowed when no child is backgroundable.
func Prepare(ctx context.Context, sup *work.Engine, llm llms.Model, ts []tools.Tool, opts ...Option) (*Kit, error) {
	if ctx == nil {
		return nil, ErrNilContext
	}
	if llm == nil || isNil(llm) {
		return nil, ErrNilModel
	}
	var cfg kitConfig
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	if ex, ok := work.ExecutionFrom(ctx); ok {
		if !cfg.owner.IsZero() {
			return nil, prepErr(ErrInsideChild, "langchaingo: WithOwner inside a child: a child's agents own work in the child's own scope (the nesting limit applies)")
		}
		if cfg.pool != nil {
			return nil, prepErr(ErrInsideChild, "langchaingo: WithPool inside a child: a child's children reserve from the child's own budget reservation")
		}
		cfg.owner, cfg.named = ex.Scope(), false
	} else if cfg.owner.IsZero() {
		cfg.owner = work.NewOwner("agent-" + randomHex())
	}
	if cfg.pool != nil {
		if err := middleware.CheckBudget(*cfg.pool); err != nil {
			return nil, fmt.Errorf("langchaingo: WithPool: %w", err)
		}
	}
	entries := make(map[string]any, len(ts))
	names := make([]string, len(ts))
	byFold := make(map[string]string, len(ts))
	infos := make(map[string]observe.TargetInfo, len(ts)) // child tools only
	for i, t := range ts {
		if t == nil || isNil(t) {
			return nil, prepErr(ErrInvalidTool, "langchaingo: tool %d is nil (%T)", i, t)
		}
		name := t.Name()
		names[i] = name
		if prev, dup := byFold[strings.ToLower(name)]; dup {
			if prev == name {
				return nil, prepErr(ErrInvalidTool, "langchaingo: two tools are named %q", name)
			}
			return nil, prepErr(ErrInvalidTool, "langchaingo: tools %q and %q differ only in case; langchaingo's executor looks tools up case-insensitively", prev, name)
		}
		byFold[strings.ToLower(name)] = name
		switch v := t.(type) {
		case *Child:
			if v.err != nil {
				return nil, fmt.Errorf("langchaingo: child %q: %w", name, v.err)
			}
			entries[name] = v.c
			infos[name] = targetInfo(name, v.c, v.provider)
		case BackgroundChild:
			if v.err != nil {
				return nil, fmt.Errorf("langchaingo: child %q: %w", name, v.err)
			}
			entries[name] = v.bg
			infos[name] = v.info
		default:
			entries[name] = t
		}
	}
	set, err := middleware.PrepareWith(ctx, sup, cfg.owner, entries,
		append([]middleware.Option{middleware.WithExtraTools(cfg.extraNames...)}, cfg.mw...)...)
	if err != nil {
		return nil, err
	}
	k := &Kit{sup: sup, set: set, schemas: map[string]map[string]any{}, ids: &callIDs{}}
	if cfg.named {
		claim, err := middleware.ClaimOwner(sup, cfg.owner.ID())
		if err != nil {
			return nil, prepErr(ErrOwnerInUse, "langchaingo: owner %q: another live coordinator has it on this engine; release it first", cfg.owner.ID())
		}
		k.owned = claim
	}
	if cfg.pool != nil {
		if err := sup.SetPool(ctx, cfg.owner, *cfg.pool); err != nil {
			k.owned.Release()
			return nil, err
		}
	}
	k.model = &Model{inner: unwrap(llm), kit: k}
	prepared := make(map[string]middleware.Tool, len(names)+1)
	for _, t := range set.Tools() {
		prepared[t.Name()] = t
	}
	// The caller's order, the work tool last.
	if set.HasWork() {
		names = append(names, middleware.WorkToolName)
	}
	for _, name := range names {
		t := prepared[name]
		if s, ok := t.(middleware.Schemer); ok {
			k.schemas[strings.ToUpper(t.Name())] = s.Schema()
			k.tools = append(k.tools, &identified{Tool: t, ids: k.ids, info: infos[t.Name()]})
			continue
		}
		k.tools = append(k.tools, t)
	}
	return k, nil
}

// isNil reports whether v holds a nil pointer, map, slice, func, chan or
// interface (a typed nil, which a nil check on the interface misses).
func isNil(v any) bool {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
}

func unwrap(m llms.Model) llms.Model {
	if w, ok := m.(*Model); ok && w.kit == nil {
		return w.inner
	}
	return m
}

// Tools returns the prepared tools in the order given to Prepare: ordinary
// tools untouched, children wrapped, the work tool last when there is one.
func (k *Kit) Tools() []tools.Tool {
	if k == nil {
		return nil
	}
	return append([]tools.Tool(nil), k.tools...)
}

// Model returns the coordinator's wrapped model (nil for the zero Kit: its
// GenerateContent and Call return ErrZeroModel).
func (k *Kit) Model() *Model {
	if k == nil {
		return nil
	}
	return k.model
}

// Owner returns the Kit's owner (the zero Owner for the zero Kit).
func (k *Kit) Owner() work.Owner {
	if k == nil {
		return work.Owner{}
	}
	return k.set.Owner()
}

// Middleware returns the underlying middleware Kit (nil for the zero Kit).
func (k *Kit) Middleware() *middleware.Kit {
	if k == nil {
		return nil
	}
	return k.set
}

// Release cancels the Kit's unfinished Work, forgets all of it and the
// owner, and frees its WithOwner id for another Kit. Call it when the agent
// instance is done. Afterwards the Kit's child tools and the work tool's
// list return the error object with code released, and its id actions
// {"status":"not_found"} (middleware.Kit.Release). A second Release does
// nothing and returns nil; the zero Kit's returns ErrNotPrepared.
//
// Release waits for the Kit's launches already in flight (background
// child calls inside the engine's Start) to return, so that no launch
// starts Work after Release returns; each is bounded only by the engine's
// own Start bound (at once for a *work.Engine; a remote engine's RPC
// under the launching call's ctx), as middleware.Kit.Release says.
func (k *Kit) Release() error {
	if k == nil || k.set == nil {
		return ErrNotPrepared
	}
	err := k.set.Release()
	k.owned.Release()
	return err
}

// identified gives each call of a prepared tool its tool-call identity.
type identified struct {
	middleware.Tool
	ids  *callIDs
	info observe.TargetInfo // what telemetry may know of a child tool
}

func (t *identified) Call(ctx context.Context, input string) (string, error) {
	if ctx == nil { // the prepared tool answers with its nil_context error object
		return t.Tool.Call(ctx, input)
	}
	if t.info != (observe.TargetInfo{}) {
		ctx = observe.WithTargetInfo(ctx, t.info)
	}
	return t.Tool.Call(middleware.WithCallID(ctx, t.ids.next(t.Name())), input)
}

// Schema returns the prepared tool's real input schema.
func (t *identified) Schema() map[string]any { return t.Tool.(middleware.Schemer).Schema() }

// Description returns the prepared tool's description. A child's also
// spells out its input object: OneShot and Conversational agents show
// the model only names and descriptions, never a schema, so without it a
// text agent's model could not know how to write run_in_background (or a
// declared schema's fields) in its "Action Input:". The work tool's own
// description already gives its input.
func (t *identified) Description() string {
	d := t.Tool.Description()
	if t.Name() == middleware.WorkToolName {
		return d
	}
	return d + inputHint(t.Schema())
}

// inputHint renders an object schema's top-level fields compactly, for
// example ` Input: a JSON object {"input": string (required),
// "run_in_background": boolean}.`
func inputHint(schema map[string]any) string {
	props, _ := schema["properties"].(map[string]any)
	if len(props) == 0 {
		return ""
	}
	required := map[string]bool{}
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				required[name] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		// Required fields first, run_in_background last, else by name.
		ri, rj := required[names[i]], required[names[j]]
		if ri != rj {
			return ri
		}
		bi, bj := names[i] == middleware.ReservedField, names[j] == middleware.ReservedField
		if bi != bj {
			return bj
		}
		return names[i] < names[j]
	})
	fields := make([]string, len(names))
	for i, name := range names {
		prop, _ := props[name].(map[string]any)
		typ, _ := prop["type"].(string)
		if typ == "" {
			typ = "any"
		}
		fields[i] = strconv.Quote(name) + ": " + typ
		if required[name] {
			fields[i] += " (required)"
		}
	}
	return " Input: a JSON object {" + strings.Join(fields, ", ") + "}."
}

// Retrofit prepares an already-built agent. An OpenAIFunctionsAgent reads
// its Tools on each Plan, so Retrofit returns a copy with prepared Tools and
// a wrapped model (build a new Executor around it). OneShot and
// Conversational agents render their tools into the prompt when they are
// built: Retrofit refuses them; rebuild them with Prepare's Tools and Model.
// It refuses a nil agent (or a typed nil) too.
func Retrofit(ctx context.Context, sup *work.Engine, agent agents.Agent, opts ...Option) (agents.Agent, *Kit, error) {
	if ctx == nil {
		return nil, nil, ErrNilContext
	}
	fa, ok := agent.(*agents.OpenAIFunctionsAgent)
	if agent == nil || ok && fa == nil {
		return nil, nil, errors.New("langchaingo: cannot retrofit a nil agent")
	}
	if !ok {
		return nil, nil, fmt.Errorf("langchaingo: cannot retrofit %T: it renders its tools into the prompt when built; rebuild it from Prepare's Tools() and Model()", agent)
	}
	if fa.LLM != nil && !sendsTools(fa.LLM) {
		return nil, nil, errToolsNotSent(fa.LLM)
	}
	kit, err := Prepare(ctx, sup, fa.LLM, fa.Tools, opts...)
	if err != nil {
		return nil, nil, err
	}
	cp := *fa
	cp.LLM = kit.Model()
	cp.Tools = kit.Tools()
	return &cp, kit, nil
}
