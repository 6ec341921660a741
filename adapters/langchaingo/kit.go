package langchaingo

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

// Kit is one coordinator agent instance's prepared tools and model. Build
// the agent from Tools and Model. It is safe for concurrent use.
type Kit struct {
	sup     work.Engine
	set     *middleware.Set
	model   *Model
	tools   []tools.Tool
	schemas map[string]map[string]any // upper-cased tool name -> real schema
	ids     *callIDs
	watch   failureWatch // failures shown to the model while RunUntilSettled runs
}

// Option configures Prepare.
type Option interface{ apply(*kitConfig) }

type kitConfig struct {
	owner      work.Owner
	extraNames []string
	pool       *work.Budget
}

type kitOptionFunc func(*kitConfig)

func (f kitOptionFunc) apply(c *kitConfig) { f(c) }

// WithOwner sets the top-level owner identity (default: a new random one).
// Use it to give a long-lived agent instance a stable name. Inside a child
// (ctx is a child's) the owner is always the child's own scope, and
// WithOwner fails preparation.
func WithOwner(id string) Option {
	return kitOptionFunc(func(c *kitConfig) {
		if id != "" {
			c.owner = work.NewOwner(id)
		}
	})
}

// WithPromptTools names tools the agent also gets from elsewhere (its
// resolved prompt); a "work" among them fails preparation.
func WithPromptTools(names ...string) Option {
	return kitOptionFunc(func(c *kitConfig) { c.extraNames = append(c.extraNames, names...) })
}

// Prepare prepares a coordinator's tools and model on sup (the in-process
// *work.Supervisor or another work.Engine). ts holds ordinary tools
// (passed through untouched), Children (foreground children) and
// Backgrounds (backgroundable children); the work tool is added when any is
// a Background. When ctx is a child's, the Kit's owner is that child's own
// scope, one nesting level deeper (the depth limit applies).
//
// Prepare fails on a nil tool (a nil interface or a typed nil such as a
// nil *T), on two tools whose names differ only in case (langchaingo's
// executor looks tools up case-insensitively), on a tool named "work" in
// any case (or a "work" among WithPromptTools) when the work tool is added,
// on a child built from an executor whose function-calling agent runs on a
// client that sends no tools (ErrToolsNotSent), and on the errors of
// middleware.Prepare (a schema that declares run_in_background). An
// ordinary tool named "work" is allowed when no child is backgroundable.
func Prepare(ctx context.Context, sup work.Engine, llm llms.Model, ts []tools.Tool, opts ...Option) (*Kit, error) {
	if llm == nil || isNil(llm) {
		return nil, errors.New("langchaingo: nil model")
	}
	var cfg kitConfig
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	if ex, ok := work.ExecutionFrom(ctx); ok {
		if !cfg.owner.IsZero() {
			return nil, errors.New("langchaingo: WithOwner inside a child: a child's agents own work in the child's own scope (the nesting limit applies)")
		}
		if cfg.pool != nil {
			return nil, errors.New("langchaingo: WithPool inside a child: a child's children reserve from the child's own budget reservation")
		}
		cfg.owner = ex.Scope()
	} else if cfg.owner.IsZero() {
		cfg.owner = work.NewOwner("agent-" + randomHex())
	}
	entries := make(map[string]any, len(ts))
	names := make([]string, len(ts))
	byFold := make(map[string]string, len(ts))
	background := false
	infos := make(map[string]work.TargetInfo, len(ts)) // child tools only
	for i, t := range ts {
		if t == nil || isNil(t) {
			return nil, fmt.Errorf("langchaingo: tool %d is nil (%T)", i, t)
		}
		name := t.Name()
		names[i] = name
		if prev, dup := byFold[strings.ToLower(name)]; dup {
			if prev == name {
				return nil, fmt.Errorf("langchaingo: two tools are named %q", name)
			}
			return nil, fmt.Errorf("langchaingo: tools %q and %q differ only in case; langchaingo's executor looks tools up case-insensitively", prev, name)
		}
		byFold[strings.ToLower(name)] = name
		switch v := t.(type) {
		case *Child:
			if v.err != nil {
				return nil, fmt.Errorf("langchaingo: child %q: %w", name, v.err)
			}
			entries[name] = v.c
			infos[name] = targetInfo(name, v.c, v.provider)
		case Background:
			if v.err != nil {
				return nil, fmt.Errorf("langchaingo: child %q: %w", name, v.err)
			}
			entries[name] = v.bg
			background = true
			infos[name] = v.info
		default:
			entries[name] = t
		}
	}
	if background {
		for _, name := range append(names[:len(names):len(names)], cfg.extraNames...) {
			if strings.EqualFold(name, middleware.WorkToolName) {
				return nil, fmt.Errorf("langchaingo: a tool is named %q, which collides with the automatic %q tool (langchaingo matches tool names case-insensitively)", name, middleware.WorkToolName)
			}
		}
	}
	set, err := middleware.Prepare(sup, cfg.owner, entries, cfg.extraNames...)
	if err != nil {
		return nil, err
	}
	if cfg.pool != nil {
		if err := sup.SetPool(cfg.owner, *cfg.pool); err != nil {
			return nil, err
		}
	}
	k := &Kit{sup: sup, set: set, schemas: map[string]map[string]any{}, ids: &callIDs{}}
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
func (k *Kit) Tools() []tools.Tool { return append([]tools.Tool(nil), k.tools...) }

// Model returns the coordinator's wrapped model.
func (k *Kit) Model() *Model { return k.model }

// Owner returns the Kit's owner.
func (k *Kit) Owner() work.Owner { return k.set.Owner() }

// Set returns the underlying middleware Set.
func (k *Kit) Set() *middleware.Set { return k.set }

// Release cancels the Kit's unfinished Work, forgets all of it and the
// owner. Call it when the agent instance is done.
func (k *Kit) Release() { k.set.Release() }

// identified gives each call of a prepared tool its tool-call identity.
type identified struct {
	middleware.Tool
	ids  *callIDs
	info work.TargetInfo // what telemetry may know of a child tool
}

func (t *identified) Call(ctx context.Context, input string) (string, error) {
	if t.info != (work.TargetInfo{}) {
		ctx = work.WithTargetInfo(ctx, t.info)
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
func Retrofit(ctx context.Context, sup work.Engine, agent agents.Agent, opts ...Option) (agents.Agent, *Kit, error) {
	fa, ok := agent.(*agents.OpenAIFunctionsAgent)
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
