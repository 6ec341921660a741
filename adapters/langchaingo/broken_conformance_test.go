package langchaingo_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/middleware/adaptertest"
)

// brokenAdapters are the langchaingo adapter with one model-facing rule
// broken each, and the suite's cases that must fail for it.
var brokenAdapters = map[string]struct {
	cases []string
	h     func() harness
}{
	// The work.ref re-encoded (keys sorted): not byte for byte.
	"ref-reencoded": {[]string{"WorkRef"}, func() harness {
		return harness{tools: wrapAll(func(_ context.Context, _, in, out string) (string, error) {
			if strings.HasPrefix(out, `{"kind":"work.ref"`) {
				return reencode(out), nil
			}
			return out, nil
		})}
	}},
	// A work tool (an ordinary one) added with no backgroundable child.
	"work-tool-always": {[]string{"WorkToolOnce"}, func() harness {
		return harness{config: func(c *adaptertest.Config) {
			for _, tl := range c.Tools {
				if tl.Background {
					return
				}
			}
			c.Tools = append(c.Tools, adaptertest.Tool{Kind: adaptertest.Plain, Name: "work", Description: "Automatic.",
				Func: func(context.Context, string) (string, error) { return "[]", nil }})
		}}
	}},
	// A child schema's run_in_background dropped instead of refused.
	"reserved-field-dropped": {[]string{"PrepareErrors"}, func() harness {
		return harness{config: func(c *adaptertest.Config) {
			for i, tl := range c.Tools {
				if props, ok := tl.Schema["properties"].(map[string]any); ok && props["run_in_background"] != nil {
					c.Tools[i].Schema = map[string]any{"type": "object"}
				}
			}
		}}
	}},
	// Child output trimmed: not exact.
	"output-trimmed": {[]string{"Foreground"}, func() harness {
		return harness{tools: wrapAll(func(_ context.Context, _, _, out string) (string, error) { return strings.TrimSpace(out), nil })}
	}},
	// Status projections re-encoded (keys sorted).
	"projection-reencoded": {[]string{"Projections"}, func() harness {
		return harness{tools: wrapWork(func(_ context.Context, in map[string]any, out string) (string, error) {
			if in["action"] == "status" || in["action"] == "list" {
				return reencode(out), nil
			}
			return out, nil
		})}
	}},
	// list newest last.
	"list-reversed": {[]string{"ListOrder"}, func() harness {
		return harness{tools: wrapWork(func(_ context.Context, in map[string]any, out string) (string, error) {
			var l []json.RawMessage
			if in["action"] != "list" || json.Unmarshal([]byte(out), &l) != nil {
				return out, nil
			}
			slices.Reverse(l)
			b, _ := json.Marshal(l)
			return string(b), nil
		})}
	}},
	// result without a timeout waits 10 s, not 30 s.
	"result-default-10s": {[]string{"ResultWait"}, func() harness {
		return harness{tools: rewriteWork(func(in map[string]any) {
			if _, has := in["timeout"]; in["action"] == "result" && !has {
				in["timeout"] = "10s"
			}
		})}
	}},
	// An agent child run as a function: its model unwrapped, so no
	// cancel at its boundary (and no guidance).
	"agent-child-unwrapped": {[]string{"Cancel", "Send"}, func() harness {
		return harness{tool: func(tl adaptertest.Tool) tools.Tool {
			if tl.Kind != adaptertest.Agent {
				return lcTool(tl)
			}
			own := make([]tools.Tool, len(tl.Agent.Tools))
			for i, x := range tl.Agent.Tools {
				own[i] = lcTool(x)
			}
			agent := agents.NewOpenAIFunctionsAgent(scriptModel{tl.Agent.Model}, own, agents.NewOpenAIOption().WithSystemMessage(tl.Agent.Instruction))
			exec := agents.NewExecutor(agent, agents.WithMaxIterations(16))
			child := lc.NewFunction(tl.Name, tl.Description, func(ctx context.Context, in string) (string, error) { return chains.Run(ctx, exec, in) }, lc.WithID(tl.ID))
			if tl.Background {
				return lc.Backgroundable(child)
			}
			return child
		}}
	}},
	// detach cancels.
	"detach-cancels": {[]string{"Detach"}, func() harness {
		return harness{tools: wrapWorkBefore(func(ctx context.Context, w tools.Tool, in map[string]any) {
			if in["action"] == "detach" {
				_, _ = w.Call(ctx, `{"action":"cancel","id":"`+str(in["id"])+`"}`)
			}
		})}
	}},
	// Tool-call identities made per reply, not the provider's.
	"identity-per-reply": {[]string{"Send"}, func() harness {
		var n atomic.Int64
		return harness{model: func(m llms.Model) llms.Model { return &suffixIDs{inner: m, n: &n} }}
	}},
	// not_found answered as an error object.
	"not-found-as-error": {[]string{"NotFound"}, func() harness {
		return harness{tools: wrapWork(func(_ context.Context, _ map[string]any, out string) (string, error) {
			if out == `{"status":"not_found"}` {
				return `{"error":{"code":"not_found","message":"no such work"}}`, nil
			}
			return out, nil
		})}
	}},
	// The status block put first, into the cacheable prefix.
	"block-first": {[]string{"StatusBlock"}, func() harness {
		return harness{model: func(m llms.Model) llms.Model { return blockFirst{m} }}
	}},
	// Function children run with the coordinator's context values.
	"context-leak": {[]string{"Isolation"}, func() harness {
		var run atomic.Pointer[context.Context]
		return harness{
			run: func(ctx context.Context) context.Context { run.Store(&ctx); return ctx },
			tool: func(tl adaptertest.Tool) tools.Tool {
				if tl.Kind == adaptertest.Function {
					f := tl.Func
					tl.Func = func(ctx context.Context, in string) (string, error) {
						if p := run.Load(); p != nil {
							ctx = leaky{ctx, *p}
						}
						return f(ctx, in)
					}
				}
				return lcTool(tl)
			}}
	}},
	// The auto-background option not passed to the middleware: the call
	// stays in the foreground past its bound.
	"auto-background-dropped": {[]string{"AutoBackground"}, func() harness {
		return harness{config: func(c *adaptertest.Config) {
			for i := range c.Tools {
				c.Tools[i].AutoBackground = 0
			}
		}}
	}},
	// Background as a child's default not passed to the middleware.
	"background-default-dropped": {[]string{"BackgroundDefault"}, func() harness {
		return harness{config: func(c *adaptertest.Config) {
			for i := range c.Tools {
				c.Tools[i].BackgroundByDefault = false
			}
		}}
	}},
	// A refused launch returned as a Go error: the executor aborts.
	"limit-as-go-error": {[]string{"Limits"}, func() harness {
		return harness{tools: wrapAll(func(_ context.Context, _, _, out string) (string, error) {
			if strings.Contains(out, `"code":"limit_exceeded"`) {
				return "", errors.New("limit")
			}
			return out, nil
		})}
	}},
	// Bad input returned as a Go error: the executor aborts.
	"bad-input-as-go-error": {[]string{"BadInput"}, func() harness {
		return harness{tools: wrapAll(func(_ context.Context, _, _, out string) (string, error) {
			if strings.Contains(out, `"code":"invalid_`) || strings.Contains(out, `"code":"missing_`) {
				return "", errors.New("bad input")
			}
			return out, nil
		})}
	}},
}

// TestBrokenConformance runs the suite against the broken adapter
// AGENTWORK_BROKEN_ADAPTER names (only as TestSuiteCatchesBrokenAdapters's
// subprocess); otherwise it does nothing.
func TestBrokenConformance(t *testing.T) {
	defect := os.Getenv("AGENTWORK_BROKEN_ADAPTER")
	if defect == "" {
		return
	}
	adaptertest.Run(t, adaptertest.Adapter{Name: "broken langchaingo (" + defect + ")", NewCoordinator: brokenAdapters[defect].h().newCoordinator})
}

// TestSuiteCatchesBrokenAdapters: each broken adapter fails its cases, and
// every case of the suite fails for at least one broken adapter.
func TestSuiteCatchesBrokenAdapters(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in subprocesses")
	}
	caught := map[string]bool{}
	for defect, b := range brokenAdapters {
		for _, c := range b.cases {
			caught[c] = true
		}
		t.Run(defect, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenConformance$/^("+strings.Join(b.cases, "|")+")$", "-test.v")
			cmd.Env = append(os.Environ(), "AGENTWORK_BROKEN_ADAPTER="+defect)
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
	for _, c := range adaptertest.Cases() {
		if !caught[c] {
			t.Errorf("no broken adapter makes case %s fail", c)
		}
	}
}

// wrapped is a prepared tool whose Call is replaced.
type wrapped struct {
	tools.Tool
	call func(ctx context.Context, in string) (string, error)
}

func (w wrapped) Call(ctx context.Context, in string) (string, error) { return w.call(ctx, in) }

// wrapAll rewrites every prepared tool's reply.
func wrapAll(f func(ctx context.Context, name, in, out string) (string, error)) func([]tools.Tool) []tools.Tool {
	return func(ts []tools.Tool) []tools.Tool {
		out := make([]tools.Tool, len(ts))
		for i, tl := range ts {
			out[i] = wrapped{tl, func(ctx context.Context, in string) (string, error) {
				o, err := tl.Call(ctx, in)
				if err != nil {
					return o, err
				}
				return f(ctx, tl.Name(), in, o)
			}}
		}
		return out
	}
}

func decodeIn(in string) map[string]any {
	m := map[string]any{}
	_ = json.Unmarshal([]byte(in), &m)
	return m
}

// wrapWork rewrites the work tool's replies.
func wrapWork(f func(ctx context.Context, in map[string]any, out string) (string, error)) func([]tools.Tool) []tools.Tool {
	return wrapAll(func(ctx context.Context, name, in, out string) (string, error) {
		if name != "work" {
			return out, nil
		}
		return f(ctx, decodeIn(in), out)
	})
}

// wrapWorkBefore runs f before each work tool call.
func wrapWorkBefore(f func(ctx context.Context, w tools.Tool, in map[string]any)) func([]tools.Tool) []tools.Tool {
	return func(ts []tools.Tool) []tools.Tool {
		out := slices.Clone(ts)
		for i, tl := range ts {
			if tl.Name() == "work" {
				out[i] = wrapped{tl, func(ctx context.Context, in string) (string, error) {
					f(ctx, tl, decodeIn(in))
					return tl.Call(ctx, in)
				}}
			}
		}
		return out
	}
}

// rewriteWork rewrites the work tool's input.
func rewriteWork(f func(in map[string]any)) func([]tools.Tool) []tools.Tool {
	return func(ts []tools.Tool) []tools.Tool {
		out := slices.Clone(ts)
		for i, tl := range ts {
			if tl.Name() == "work" {
				out[i] = wrapped{tl, func(ctx context.Context, in string) (string, error) {
					m := decodeIn(in)
					f(m)
					b, _ := json.Marshal(m)
					return tl.Call(ctx, string(b))
				}}
			}
		}
		return out
	}
}

func reencode(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func str(v any) string { s, _ := v.(string); return s }

// suffixIDs gives each reply's tool calls ids of its own ("<id>#<n>") and
// takes the suffix off again in the requests.
type suffixIDs struct {
	inner llms.Model
	n     *atomic.Int64
}

func (m *suffixIDs) Call(ctx context.Context, p string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, p, opts...)
}

func (m *suffixIDs) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	strip := func(id string) string { return strings.SplitN(id, "#", 2)[0] }
	cp := make([]llms.MessageContent, len(msgs))
	for i, mc := range msgs {
		cp[i] = llms.MessageContent{Role: mc.Role}
		for _, p := range mc.Parts {
			switch p := p.(type) {
			case llms.ToolCall:
				p.ID = strip(p.ID)
				cp[i].Parts = append(cp[i].Parts, p)
			case llms.ToolCallResponse:
				p.ToolCallID = strip(p.ToolCallID)
				cp[i].Parts = append(cp[i].Parts, p)
			default:
				cp[i].Parts = append(cp[i].Parts, p)
			}
		}
	}
	resp, err := m.inner.GenerateContent(ctx, cp, opts...)
	if err != nil {
		return resp, err
	}
	n := m.n.Add(1)
	for _, c := range resp.Choices {
		for k := range c.ToolCalls {
			c.ToolCalls[k].ID += "#" + strconv.FormatInt(n, 10)
		}
	}
	return resp, nil
}

// blockFirst moves a trailing status block to the front, after the
// system message.
type blockFirst struct{ inner llms.Model }

func (m blockFirst) Call(ctx context.Context, p string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, p, opts...)
}

func (m blockFirst) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	if n := len(msgs); n > 2 {
		if tc, ok := msgs[n-1].Parts[0].(llms.TextContent); ok && strings.HasPrefix(tc.Text, "[background work]") {
			cp := append([]llms.MessageContent{msgs[0], msgs[n-1]}, msgs[1:n-1]...)
			msgs = cp
		}
	}
	return m.inner.GenerateContent(ctx, msgs, opts...)
}

// leaky is a child's context that also answers with the run's values.
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
