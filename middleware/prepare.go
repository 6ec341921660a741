package middleware

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// WorkToolName is the automatic tool's name. An authored tool of that name
// is a preparation error.
const WorkToolName = "work"

// Kit is one owner's prepared tools: the authored entries, with
// backgroundable children wrapped, plus the work tool when any child is
// backgroundable. It is safe for concurrent use.
//
// The zero Kit has no tools and its Release returns ErrNotPrepared.
type Kit struct {
	sup   *work.Engine
	owner work.Owner
	obs   observe.Observer
	tools []Tool
	bg    bool
	auto  time.Duration // WithAutoBackground's bound, 0 when none

	// released is set by the first Release. relMu orders launches (read)
	// against it (write): no launch starts Work after Release.
	relMu    sync.RWMutex
	released atomic.Bool

	// watch records the failed Works the Kit's status blocks showed while
	// RunUntilSettled runs.
	watch failureWatch
}

// Prepare is PrepareContext with context.Background(): the probe of the
// engine (see PrepareContext) cannot be cancelled by the caller, and is
// bounded by probeTimeout (30 s) only. Use PrepareContext when the engine
// is remote.
func Prepare(sup *work.Engine, owner work.Owner, entries map[string]any, extra ...string) (*Kit, error) {
	return PrepareContext(context.Background(), sup, owner, entries, extra...)
}

// PrepareContext prepares one agent's tool map for owner on sup (the
// in-process *work.Engine or another work.Engine). Each entry is a
// Tool (passed through untouched; its Name must equal its label), a Child
// (a foreground child: run isolated, exact output) or a BackgroundChild (a
// backgroundable child). Exactly one work tool is added when at least one
// entry is a BackgroundChild. Tools are returned in label order, work last.
//
// ctx is only for the probe: PrepareContext asks the engine whether it
// serves owner with a Subscribe (under ctx, bounded by probeTimeout) that
// it closes at once. A ctx that is done makes the probe fail on an engine
// whose Subscribe honours ctx (a remote one; a *work.Engine answers
// at once and ignores it), with an error wrapping ctx.Err(). The Kit keeps
// no ctx.
//
// PrepareContext fails (each error wraps one of the sentinels of this
// package, for errors.Is, or the engine's refusal) when ctx is nil
// (ErrNilContext), when sup is nil or a typed nil pointer of any engine
// type (ErrNilEngine), when the engine is not
// ready (it refuses the owner with work.ErrNotInitialized, as a zero
// work.Engine does: the error satisfies errors.Is for both
// ErrEngineNotReady and work.ErrNotInitialized), when the engine refuses
// the owner otherwise (a closed engine: work.ErrClosed; a done ctx:
// ctx.Err()), when a label is empty, an entry has another type, a Tool's
// Name differs from its label, a label is named "work" in any case while the
// work tool is added (an ordinary tool named "work" is allowed when no
// entry is a BackgroundChild: there is no collision), a child has
// no Run or an invalid Kind, a child's label is not a tool name providers
// accept (^[a-zA-Z0-9_-]{1,64}$, as OpenAI and Anthropic require:
// ErrInvalidChildName), a child's Budget has a negative field
// (ErrNegativeBudget) or its MaxInputBytes is negative (ErrNegativeLimit),
// or a child's schema is not JSON-encodable, is
// not an object schema or declares run_in_background. extra lists the names
// of tools the agent gets from elsewhere (for example its resolved prompt);
// a "work" among them (in any case) is also an error when the work tool is
// added. Every child's schema is copied:
// later changes to the caller's map do not reach the Kit.
func PrepareContext(ctx context.Context, sup *work.Engine, owner work.Owner, entries map[string]any, extra ...string) (*Kit, error) {
	return PrepareWith(ctx, sup, owner, entries, WithExtraTools(extra...))
}

// PrepareWith is PrepareContext configured by options: WithExtraTools (what
// PrepareContext's extra gives) and WithAutoBackground (the children's
// default bound for moving a call to the background). It also fails, with
// ErrInvalidBackgroundOption, on a bound of zero or less and on a child
// that is not backgroundable with AutoBackground or BackgroundByDefault.
func PrepareWith(ctx context.Context, sup *work.Engine, owner work.Owner, entries map[string]any, opts ...Option) (*Kit, error) {
	cfg := newConfig(opts)
	extra := cfg.extra
	if ctx == nil {
		return nil, ErrNilContext
	}
	if sup == nil {
		return nil, ErrNilEngine
	}
	obs := boundary.Observer(sup)
	if obs == nil { // an engine of another package may have none
		obs = observe.NopObserver{}
	}
	if owner.IsZero() {
		return nil, ErrZeroOwner
	}
	// The work tool is added when any entry is a BackgroundChild; a name equal
	// to it in any case (frameworks such as langchaingo match tool names
	// case-insensitively) collides with it.
	hasWork := false
	labels := make([]string, 0, len(entries))
	for label, e := range entries {
		labels = append(labels, label)
		if _, ok := e.(BackgroundChild); ok {
			hasWork = true
		}
	}
	if hasWork {
		for _, name := range extra {
			if strings.EqualFold(name, WorkToolName) {
				return nil, prepErr(ErrWorkToolName, `middleware: the agent already has a tool named %q, which collides with the automatic "work" tool`, name)
			}
		}
	}
	sort.Strings(labels)
	if cfg.autoSet && cfg.auto <= 0 {
		return nil, prepErr(ErrInvalidBackgroundOption, "middleware: WithAutoBackground: the bound must be positive (got %s)", cfg.auto)
	}
	s := &Kit{sup: sup, owner: owner, obs: obs, auto: cfg.auto}
	for _, label := range labels {
		if label == "" {
			return nil, prepErr(ErrInvalidEntry, "middleware: empty tool label")
		}
		if hasWork && strings.EqualFold(label, WorkToolName) {
			return nil, prepErr(ErrWorkToolName, `middleware: an authored tool is named %q, which collides with the automatic "work" tool`, label)
		}
		switch e := entries[label].(type) {
		case BackgroundChild:
			if !e.ok {
				return nil, prepErr(ErrInvalidEntry, "middleware: entry %q: zero BackgroundChild (use Backgroundable)", label)
			}
			if e.err != nil {
				return nil, prepErr(ErrInvalidSchema, "middleware: child %q: input schema is not JSON-encodable: %v", label, e.err)
			}
			t, err := s.newChildTool(label, e.child, true)
			if err != nil {
				return nil, err
			}
			s.tools = append(s.tools, t)
			s.bg = true
		case Child:
			t, err := s.newChildTool(label, e, false)
			if err != nil {
				return nil, err
			}
			s.tools = append(s.tools, t)
		case Tool:
			if e == nil {
				return nil, prepErr(ErrInvalidEntry, "middleware: entry %q is nil", label)
			}
			if e.Name() != label {
				return nil, prepErr(ErrInvalidEntry, "middleware: entry %q: tool is named %q; label and name must match", label, e.Name())
			}
			s.tools = append(s.tools, e)
		default:
			return nil, prepErr(ErrInvalidEntry, "middleware: entry %q: unsupported type %T (want Tool, Child or BackgroundChild)", label, e)
		}
	}
	if err := probe(ctx, sup, owner); err != nil {
		return nil, err
	}
	if s.bg {
		s.tools = append(s.tools, &workTool{set: s})
	}
	return s, nil
}

// probe asks the engine whether it serves owner, with the cheapest call
// that reports a closed engine: a Subscribe of one entry, closed at once.
// It carries no content. Its ctx is PrepareContext's, bounded by
// probeTimeout. An engine that is not initialized (work.ErrNotInitialized)
// is reported as ErrEngineNotReady too.
func probe(ctx context.Context, sup *work.Engine, owner work.Owner) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	sub, err := sup.Subscribe(ctx, owner, 1)
	if errors.Is(err, work.ErrNotInitialized) {
		return fmt.Errorf("%w: %w", ErrEngineNotReady, err)
	}
	if err != nil {
		return fmt.Errorf("middleware: the engine refuses owner %q: %w", owner.ID(), err)
	}
	if sub != nil {
		sub.Close()
	}
	return nil
}

// Tools returns the prepared tools in label order, the work tool last.
func (s *Kit) Tools() []Tool {
	if s == nil {
		return nil
	}
	return append([]Tool(nil), s.tools...)
}

// Owner returns the owner the Kit was prepared for (the zero Owner for the
// zero Kit).
func (s *Kit) Owner() work.Owner {
	if s == nil {
		return work.Owner{}
	}
	return s.owner
}

// Release cancels the owner's unfinished Work, forgets all of it and the
// owner (work.Engine.Release). Call it when the agent instance is done.
// Afterwards the Kit's child tools and the work tool's list return the
// error object with code released, its id actions {"status":"not_found"}
// (even when the owner is prepared again: the new Kit's Work is not this
// Kit's) and its status block is empty. A second Release does nothing and
// returns nil; the zero Kit's returns ErrNotPrepared. It is safe to call
// concurrently with the tools: no launch starts Work after it returns (a
// foreground call already past its check may still run, and Release
// cancels it as the engine cancels the owner's unfinished Work).
//
// To keep that guarantee Release first waits for the launches already in
// flight (background child calls past their released check, inside the
// engine's Start) to return, and only then marks the Kit released and
// releases the owner, so their Work is cancelled with the rest. Each such
// wait is bounded only by the engine's own Start bound (a
// *work.Engine's Start returns at once; a remote engine's is its RPC
// under the launching tool call's ctx), not by Release, which has no ctx.
// A launch that reaches its check while Release waits waits too, and is
// then refused with code released.
//
// Release has no ctx: it calls the engine's Release with
// context.Background() bounded by releaseTimeout, and returns that call's
// error (never one for a work.Engine made by New; a remote engine's
// when it could not release the owner). The Kit is released even then:
// its tools refuse from then on, and a second Release does not retry (call
// the engine's Release for that).
func (s *Kit) Release() error {
	if s == nil || s.sup == nil {
		return ErrNotPrepared
	}
	s.relMu.Lock()
	first := s.released.CompareAndSwap(false, true)
	s.relMu.Unlock()
	if !first {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	return s.sup.Release(ctx, s.owner)
}

// probeTimeout and releaseTimeout bound the engine calls of
// PrepareContext's probe (under the caller's ctx too) and of Release,
// which has no caller's ctx. An in-process engine
// answers at once; a remote one gets long enough for a few round trips.
const (
	probeTimeout   = 30 * time.Second
	releaseTimeout = 30 * time.Second
)

// Released reports whether Release was called.
func (s *Kit) Released() bool { return s != nil && s.released.Load() }

// HasWork reports whether the Kit includes the work tool.
func (s *Kit) HasWork() bool { return s != nil && s.bg }

// childTool is a prepared child: foreground-only, or backgroundable.
type childTool struct {
	set        *Kit
	label      string
	child      Child
	background bool
	schema     map[string]any
	maxInput   int           // the raw input bound, in bytes
	auto       time.Duration // a call without run_in_background moves after it (0: never)
	byDefault  bool          // an absent run_in_background means true
}

func (s *Kit) newChildTool(label string, c Child, background bool) (*childTool, error) {
	if !validChildName(label) {
		return nil, prepErr(ErrInvalidChildName, "middleware: child %q: the name must match ^[a-zA-Z0-9_-]{1,64}$ (the tool names OpenAI and Anthropic accept)", label)
	}
	if c.Run == nil && c.Job == nil {
		return nil, prepErr(ErrInvalidChild, "middleware: child %q has no Run", label)
	}
	if c.Kind != work.KindAgent && c.Kind != work.KindFunction {
		return nil, prepErr(ErrInvalidChild, "middleware: child %q: unknown kind %d", label, c.Kind)
	}
	if err := checkWaits(label, c, background); err != nil {
		return nil, err
	}
	auto, err := autoBound(label, c, background, s.auto)
	if err != nil {
		return nil, err
	}
	if err := checkUpdates(label, &c, s.owner); err != nil {
		return nil, err
	}
	if err := CheckBudget(c.Budget); err != nil {
		return nil, fmt.Errorf("middleware: child %q: %w", label, err)
	}
	if c.MaxInputBytes < 0 {
		return nil, prepErr(ErrNegativeLimit, "middleware: child %q: MaxInputBytes is negative (%d)", label, c.MaxInputBytes)
	}
	maxInput := c.MaxInputBytes
	if maxInput == 0 {
		maxInput = DefaultMaxInputBytes
	}
	if c.Schema != nil {
		// A private, normalized copy: validation then sees the schema as it
		// was at Prepare, with []any lists and map[string]any objects.
		schema, err := cloneSchema(c.Schema)
		if err != nil {
			return nil, prepErr(ErrInvalidSchema, "middleware: child %q: input schema is not JSON-encodable: %v", label, err)
		}
		c.Schema = schema
	}
	if err := checkChildSchema(label, c.Schema); err != nil {
		return nil, err
	}
	schema := c.Schema
	if schema == nil {
		schema = stringSchema()
	}
	if background {
		schema = withReserved(schema, c.BackgroundByDefault)
	} else {
		schema = copySchema(schema)
	}
	return &childTool{set: s, label: label, child: c, background: background, schema: schema, maxInput: maxInput,
		auto: auto, byDefault: c.BackgroundByDefault}, nil
}

func (t *childTool) Name() string { return t.label }

func (t *childTool) Description() string {
	d := t.child.Description
	if t.background {
		d += t.backgroundNote()
	}
	return d
}

// Schema returns the child's input schema, with run_in_background when the
// child is backgroundable. The returned map is a copy.
func (t *childTool) Schema() map[string]any { return copySchema(t.schema) }

// Call runs the child. It never returns a Go error: bad input and failures
// come back as the error object, so an agent loop is never aborted. A nil
// ctx gets code nil_context, a call after the Kit's Release code released,
// and an input over the child's MaxInputBytes code input_too_large (it is
// not parsed; the Observer sees a foreground call), all before any Work is
// accepted. run_in_background true launches; false is a foreground call;
// absent is a launch for a child with BackgroundByDefault, a launch
// awaited up to its bound (await) for a child with an AutoBackground
// bound, else a foreground call.
func (t *childTool) Call(ctx context.Context, raw string) (string, error) {
	if ctx == nil {
		return nilContext.JSON(), nil
	}
	s := t.set
	if len(raw) > t.maxInput {
		_, end := s.obs.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallForeground, Tool: t.label, CallID: CallID(ctx), Owner: s.owner.ID()})
		end(observe.ToolCallEnd{Outcome: "invalid", ErrorClass: CodeInputTooLarge})
		return errObj(CodeInputTooLarge, fmt.Sprintf("the input is %d bytes, over this child's limit of %d bytes; send a shorter input", len(raw), t.maxInput)).JSON(), nil
	}
	kind := observe.ToolCallForeground
	var auto time.Duration // the bound of a call that may move to the background
	in, perr := parseChildInput(&t.child, raw)
	if perr == nil {
		switch {
		case in.background && !t.background:
			perr = errors.New(`this child does not run in the background; omit "run_in_background"`)
		case in.background || !in.explicit && t.byDefault:
			kind = observe.ToolCallLaunch
		case !in.explicit && t.auto > 0:
			kind, auto = observe.ToolCallLaunch, t.auto
		}
	}
	if perr == nil && kind == observe.ToolCallForeground && t.child.NeedsApproval {
		perr = errors.New(`this child needs approval before it starts: set "run_in_background": true and check on it with the work tool`)
	}
	if perr == nil && t.child.Validate != nil {
		perr = t.validate(in.input)
	}
	ctx, end := s.obs.Begin(ctx, observe.ToolCall{Kind: kind, Tool: t.label, CallID: CallID(ctx), Owner: s.owner.ID(), AutoBackground: auto})
	if perr != nil {
		end(observe.ToolCallEnd{Outcome: "invalid", ErrorClass: CodeChildInput})
		return errObj(CodeChildInput, perr.Error()).JSON(), nil
	}
	if s.released.Load() {
		end(observe.ToolCallEnd{Outcome: "rejected", ErrorClass: CodeReleased})
		return released.JSON(), nil
	}
	spec := work.Spec{
		Owner:          s.owner,
		Target:         work.Target{Label: t.label, ID: t.child.ID, Kind: t.child.Kind},
		Run:            func(ctx context.Context) (string, error) { return t.child.Run(ctx, in.input) },
		Input:          in.input,
		MaxResultBytes: t.child.MaxResultBytes,
		Budget:         t.child.Budget,
		FailOnBudget:   t.child.FailOnBudget,
		Job:            t.child.Job,
		Updates:        t.child.Updates,
	}
	if t.child.Job != nil {
		spec.Run = nil // the engine submits and polls the job
	}
	if kind == observe.ToolCallLaunch {
		spec.NeedsApproval, spec.ApprovalTimeout = t.child.NeedsApproval, t.child.ApprovalTimeout
	}
	if kind == observe.ToolCallLaunch {
		// A launch repeated with the same tool-call identity (a retry
		// after a lost reply) gets the same work.ref; the engine keeps
		// only a digest of the input.
		spec.CallID, spec.InputDigest = CallID(ctx), sha256.Sum256([]byte(in.input))
		var deadline time.Time // a call that may move waits until then, from its start
		if auto > 0 {
			deadline = boundary.Now(s.sup).Add(auto)
		}
		s.relMu.RLock()
		if s.released.Load() {
			s.relMu.RUnlock()
			end(observe.ToolCallEnd{Outcome: "rejected", ErrorClass: CodeReleased})
			return released.JSON(), nil
		}
		ref, err := s.sup.Start(ctx, spec)
		s.relMu.RUnlock()
		if err != nil {
			o := fromWork(err)
			end(observe.ToolCallEnd{Outcome: "rejected", ErrorClass: o.Code})
			return o.JSON(), nil
		}
		if auto > 0 {
			return t.await(ctx, ref, deadline, auto, end), nil
		}
		end(observe.ToolCallEnd{WorkID: ref.ID, Outcome: "ok"})
		return mustJSON(ref), nil
	}
	out, err := s.sup.Call(ctx, spec)
	if err != nil {
		return failedCall("", err, end), nil
	}
	end(observe.ToolCallEnd{Outcome: "ok"})
	return out, nil
}

// validate runs the child's Validate. A panic in it is the child's bad
// input, not the caller's crash; its value is not shown. The error's text
// is cut to maxValidateMessage bytes, so a Validate that echoes a huge
// input cannot make a huge reply.
func (t *childTool) validate(input string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("the child's input validation failed")
		}
	}()
	if err := t.child.Validate(input); err != nil {
		return errors.New(clip(err.Error(), maxValidateMessage))
	}
	return nil
}
