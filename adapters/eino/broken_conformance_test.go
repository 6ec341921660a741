package eino_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"

	"github.com/agentwork/agentwork/middleware/adaptertest"
)

// brokenAdapters are the Eino adapter with one of the rules it implements
// itself broken each (the status block's place through WrapModel, the
// work tool's injection and preparation errors in BeforeAgent, a child's
// isolation, guidance at its BeforeModelRewriteState), and the suite's
// cases that must fail for it. (A child middleware that ignored the
// cancel at the boundary is not among them: Eino's own run stops on the
// child's cancelled context before the model request.) The rules package middleware holds
// for every adapter are broken against the langchaingo adapter
// (adapters/langchaingo/broken_conformance_test.go), whose table makes
// every case of the suite fail at least once.
var brokenAdapters = map[string]struct {
	cases []string
	h     harness
}{
	// WrapModel puts the status block first, into the cacheable prefix.
	"block-first": {[]string{"StatusBlock"}, harness{coordinator: func(mw adk.ChatModelAgentMiddleware, _ *shared) adk.ChatModelAgentMiddleware {
		return wrapModel{mw, func(m model.BaseChatModel) model.BaseChatModel { return rewrite{m, blockFirst} }}
	}}},
	// The status block saved into the conversation: each request's block
	// is added to the agent's state before the next request.
	"block-saved": {[]string{"StatusBlock"}, harness{coordinator: func(mw adk.ChatModelAgentMiddleware, sh *shared) adk.ChatModelAgentMiddleware {
		return saveBlock{wrapModel{mw, func(m model.BaseChatModel) model.BaseChatModel { return rewrite{m, sh.keepBlock} }}, sh}
	}}},
	// The coordinator's status block also in its agent children's
	// requests.
	"block-in-child": {[]string{"StatusBlock"}, harness{
		coordinator: func(mw adk.ChatModelAgentMiddleware, sh *shared) adk.ChatModelAgentMiddleware {
			return wrapModel{mw, func(m model.BaseChatModel) model.BaseChatModel { return rewrite{m, sh.keepBlock} }}
		},
		child: func(mw adk.ChatModelAgentMiddleware, sh *shared) adk.ChatModelAgentMiddleware {
			return wrapModel{mw, func(m model.BaseChatModel) model.BaseChatModel { return rewrite{m, sh.addBlock} }}
		},
	}},
	// BeforeAgent adds a work tool even when no child is backgroundable.
	"work-tool-always": {[]string{"WorkToolOnce"}, harness{coordinator: func(mw adk.ChatModelAgentMiddleware, _ *shared) adk.ChatModelAgentMiddleware {
		return beforeAgent{mw, func(ctx context.Context, rc *adk.ChatModelAgentContext, err error) (context.Context, *adk.ChatModelAgentContext, error) {
			if err != nil || rc == nil || hasTool(ctx, rc.Tools, "work") {
				return ctx, rc, err
			}
			out := *rc
			out.Tools = append(rc.Tools[:len(rc.Tools):len(rc.Tools)], plainTool{adaptertest.Tool{Name: "work", Description: "Automatic.",
				Func: func(context.Context, string) (string, error) { return "[]", nil }}})
			return ctx, &out, nil
		}}
	}}},
	// BeforeAgent swallows a preparation error: the agent runs with its
	// tools unprepared.
	"prepare-error-swallowed": {[]string{"PrepareErrors"}, harness{coordinator: func(mw adk.ChatModelAgentMiddleware, _ *shared) adk.ChatModelAgentMiddleware {
		return swallow{mw}
	}}},
	// An agent child's requests carry the coordinator's conversation.
	"child-history": {[]string{"Isolation"}, harness{
		coordinator: func(mw adk.ChatModelAgentMiddleware, sh *shared) adk.ChatModelAgentMiddleware {
			return beforeModel{mw, func(ctx context.Context, st *adk.ChatModelAgentState) *adk.ChatModelAgentState {
				sh.mu.Lock()
				sh.history = append([]*schema.Message(nil), st.Messages...)
				sh.mu.Unlock()
				return st
			}}
		},
		child: func(mw adk.ChatModelAgentMiddleware, sh *shared) adk.ChatModelAgentMiddleware {
			return beforeModel{mw, func(ctx context.Context, st *adk.ChatModelAgentState) *adk.ChatModelAgentState {
				sh.mu.Lock()
				defer sh.mu.Unlock()
				out := *st
				out.Messages = append(append([]*schema.Message(nil), sh.history...), st.Messages...)
				return &out
			}}
		},
	}},
	// An agent child runs with the coordinator's run context values.
	"child-context-leak": {[]string{"Isolation"}, harness{
		coordinator: func(mw adk.ChatModelAgentMiddleware, sh *shared) adk.ChatModelAgentMiddleware {
			return beforeAgent{mw, func(ctx context.Context, rc *adk.ChatModelAgentContext, err error) (context.Context, *adk.ChatModelAgentContext, error) {
				sh.mu.Lock()
				sh.run = ctx
				sh.mu.Unlock()
				return ctx, rc, err
			}}
		},
		child: func(mw adk.ChatModelAgentMiddleware, sh *shared) adk.ChatModelAgentMiddleware {
			return beforeAgent{mw, func(ctx context.Context, rc *adk.ChatModelAgentContext, err error) (context.Context, *adk.ChatModelAgentContext, error) {
				sh.mu.Lock()
				defer sh.mu.Unlock()
				if sh.run != nil {
					ctx = leaky{ctx, sh.run}
				}
				return ctx, rc, err
			}}
		},
	}},
	// An agent child's guidance is taken at its boundary but not added to
	// its conversation.
	"guidance-dropped": {[]string{"Send"}, harness{child: func(mw adk.ChatModelAgentMiddleware, _ *shared) adk.ChatModelAgentMiddleware {
		return dropGuidance{mw}
	}}},
}

// TestBrokenConformance runs the suite against the broken adapter
// AGENTWORK_BROKEN_EINO names (only as TestSuiteCatchesBrokenAdapters's
// subprocess); otherwise it does nothing.
func TestBrokenConformance(t *testing.T) {
	defect := os.Getenv("AGENTWORK_BROKEN_EINO")
	if defect == "" {
		return
	}
	adaptertest.Run(t, adaptertest.Adapter{Name: "broken eino (" + defect + ")", NewCoordinator: brokenAdapters[defect].h.newCoordinator})
}

// TestSuiteCatchesBrokenAdapters: each broken Eino adapter fails its
// cases (and the unbroken harness passes them: TestConformance).
func TestSuiteCatchesBrokenAdapters(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in subprocesses")
	}
	for defect, b := range brokenAdapters {
		t.Run(defect, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenConformance$/^("+strings.Join(b.cases, "|")+")$", "-test.v")
			cmd.Env = append(os.Environ(), "AGENTWORK_BROKEN_EINO="+defect)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed an adapter with defect %s:\n%s", defect, out)
			}
			for _, c := range b.cases {
				if !strings.Contains(string(out), "--- FAIL: TestBrokenConformance/"+c+" ") {
					t.Errorf("defect %s: case %s did not fail:\n%s", defect, c, out)
				}
			}
		})
	}
}

// shared is what one coordinator's run and its children's runs saw.
type shared struct {
	mu      sync.Mutex
	block   *schema.Message   // the coordinator's last status block
	history []*schema.Message // the coordinator's conversation at its last request
	run     context.Context   // the coordinator's run context
}

// keepBlock records a request's trailing status block.
func (sh *shared) keepBlock(in []*schema.Message) []*schema.Message {
	if n := len(in); n > 0 && isBlock(in[n-1]) {
		sh.mu.Lock()
		sh.block = in[n-1]
		sh.mu.Unlock()
	}
	return in
}

// addBlock appends the coordinator's last status block.
func (sh *shared) addBlock(in []*schema.Message) []*schema.Message {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.block == nil {
		return in
	}
	return append(in[:len(in):len(in)], sh.block)
}

func isBlock(m *schema.Message) bool {
	return m != nil && m.Role == schema.User && strings.HasPrefix(m.Content, "[background work]")
}

// blockFirst moves a trailing status block to the front, after the
// system message.
func blockFirst(in []*schema.Message) []*schema.Message {
	n := len(in)
	if n < 3 || !isBlock(in[n-1]) {
		return in
	}
	return append([]*schema.Message{in[0], in[n-1]}, in[1:n-1]...)
}

func hasTool(ctx context.Context, ts []tool.BaseTool, name string) bool {
	for _, t := range ts {
		if info, err := t.Info(ctx); err == nil && info.Name == name {
			return true
		}
	}
	return false
}

// wrapModel wraps the model under the middleware's (where the provider
// is), so that wrap sees each request as sent.
type wrapModel struct {
	adk.ChatModelAgentMiddleware
	wrap func(model.BaseChatModel) model.BaseChatModel
}

func (w wrapModel) WrapModel(ctx context.Context, m model.BaseChatModel, mc *adk.ModelContext) (model.BaseChatModel, error) {
	return w.ChatModelAgentMiddleware.WrapModel(ctx, w.wrap(m), mc)
}

// rewrite is a model whose requests' messages f rewrites.
type rewrite struct {
	inner model.BaseChatModel
	f     func([]*schema.Message) []*schema.Message
}

func (r rewrite) Generate(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	return r.inner.Generate(ctx, r.f(in), opts...)
}

func (r rewrite) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	return r.inner.Stream(ctx, r.f(in), opts...)
}

// saveBlock adds the last status block the model was sent to the agent's
// state before each request.
type saveBlock struct {
	adk.ChatModelAgentMiddleware
	sh *shared
}

func (s saveBlock) BeforeModelRewriteState(ctx context.Context, st *adk.ChatModelAgentState, mc *adk.ModelContext) (context.Context, *adk.ChatModelAgentState, error) {
	ctx, st, err := s.ChatModelAgentMiddleware.BeforeModelRewriteState(ctx, st, mc)
	s.sh.mu.Lock()
	defer s.sh.mu.Unlock()
	if err != nil || st == nil || s.sh.block == nil {
		return ctx, st, err
	}
	out := *st
	out.Messages = append(st.Messages[:len(st.Messages):len(st.Messages)], s.sh.block)
	return ctx, &out, nil
}

// beforeAgent rewrites what BeforeAgent returns.
type beforeAgent struct {
	adk.ChatModelAgentMiddleware
	f func(context.Context, *adk.ChatModelAgentContext, error) (context.Context, *adk.ChatModelAgentContext, error)
}

func (b beforeAgent) BeforeAgent(ctx context.Context, rc *adk.ChatModelAgentContext) (context.Context, *adk.ChatModelAgentContext, error) {
	return b.f(b.ChatModelAgentMiddleware.BeforeAgent(ctx, rc))
}

// swallow turns BeforeAgent's preparation error into the unprepared run.
type swallow struct{ adk.ChatModelAgentMiddleware }

func (s swallow) BeforeAgent(ctx context.Context, rc *adk.ChatModelAgentContext) (context.Context, *adk.ChatModelAgentContext, error) {
	if c, out, err := s.ChatModelAgentMiddleware.BeforeAgent(ctx, rc); err == nil {
		return c, out, nil
	}
	return ctx, rc, nil
}

// beforeModel rewrites the state BeforeModelRewriteState returns.
type beforeModel struct {
	adk.ChatModelAgentMiddleware
	f func(context.Context, *adk.ChatModelAgentState) *adk.ChatModelAgentState
}

func (b beforeModel) BeforeModelRewriteState(ctx context.Context, st *adk.ChatModelAgentState, mc *adk.ModelContext) (context.Context, *adk.ChatModelAgentState, error) {
	ctx, st, err := b.ChatModelAgentMiddleware.BeforeModelRewriteState(ctx, st, mc)
	if err != nil || st == nil {
		return ctx, st, err
	}
	return ctx, b.f(ctx, st), nil
}

// dropGuidance takes the boundary but keeps the state as it was.
type dropGuidance struct{ adk.ChatModelAgentMiddleware }

func (d dropGuidance) BeforeModelRewriteState(ctx context.Context, st *adk.ChatModelAgentState, mc *adk.ModelContext) (context.Context, *adk.ChatModelAgentState, error) {
	c, _, err := d.ChatModelAgentMiddleware.BeforeModelRewriteState(ctx, st, mc)
	return c, st, err
}

// leaky is a child's context that also answers with the coordinator run's
// values.
type leaky struct {
	context.Context
	run context.Context
}

func (l leaky) Value(k any) any {
	if v := l.Context.Value(k); v != nil {
		return v
	}
	return l.run.Value(k)
}
