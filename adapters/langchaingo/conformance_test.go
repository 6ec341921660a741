package langchaingo_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/middleware/adaptertest"
)

// TestConformance runs the adapter conformance suite on OpenAIFunctionsAgent
// coordinators and children.
func TestConformance(t *testing.T) {
	adaptertest.Run(t, adaptertest.Adapter{Name: "langchaingo", NewCoordinator: harness{}.newCoordinator})
}

// harness is the suite's harness: an Executor over an
// OpenAIFunctionsAgent built from Prepare's Tools and Model. Its hooks,
// all nil in TestConformance, let broken_conformance_test.go break one
// rule at a time.
type harness struct {
	config func(*adaptertest.Config)             // before anything is built
	model  func(llms.Model) llms.Model           // the coordinator's model under the Kit's
	tools  func([]tools.Tool) []tools.Tool       // the prepared tools
	tool   func(adaptertest.Tool) tools.Tool     // a child, instead of lcTool's
	run    func(context.Context) context.Context // the run's context
}

func (h harness) newCoordinator(_ *testing.T, cfg adaptertest.Config) (adaptertest.Coordinator, error) {
	if h.config != nil {
		h.config(&cfg)
	}
	ts := make([]tools.Tool, len(cfg.Tools))
	for i, tl := range cfg.Tools {
		ts[i] = lcTool(tl)
		if h.tool != nil && tl.Kind != adaptertest.Plain {
			ts[i] = h.tool(tl)
		}
	}
	var llm llms.Model = scriptModel{cfg.Model}
	if h.model != nil {
		llm = h.model(llm)
	}
	kit, err := lc.Prepare(context.Background(), cfg.Engine, llm, ts, lc.WithOwner(cfg.Owner))
	if err != nil {
		return nil, err
	}
	prepared := kit.Tools()
	if h.tools != nil {
		prepared = h.tools(prepared)
	}
	agent := agents.NewOpenAIFunctionsAgent(kit.Model(), prepared, agents.NewOpenAIOption().WithSystemMessage(cfg.Instruction))
	return coordinator{kit, agents.NewExecutor(agent, agents.WithMaxIterations(cfg.MaxIterations)), h.run}, nil
}

type coordinator struct {
	kit  *lc.Kit
	exec *agents.Executor
	ctx  func(context.Context) context.Context
}

func (c coordinator) Run(ctx context.Context, input string) (string, error) {
	if c.ctx != nil {
		ctx = c.ctx(ctx)
	}
	return chains.Run(ctx, c.exec, input)
}

func (c coordinator) Release() error { return c.kit.Release() }

// lcTool translates one of the suite's tools.
func lcTool(tl adaptertest.Tool) tools.Tool {
	var opts []lc.ChildOption
	if tl.ID != "" {
		opts = append(opts, lc.WithID(tl.ID))
	}
	if tl.Schema != nil {
		opts = append(opts, lc.WithSchema(tl.Schema))
	}
	if tl.AutoBackground > 0 {
		opts = append(opts, lc.WithAutoBackground(tl.AutoBackground))
	}
	if tl.BackgroundByDefault {
		opts = append(opts, lc.WithBackgroundDefault())
	}
	var child *lc.Child
	switch tl.Kind {
	case adaptertest.Plain:
		return funcTool{name: tl.Name, desc: tl.Description, fn: tl.Func}
	case adaptertest.Function:
		child = lc.NewFunction(tl.Name, tl.Description, tl.Func, opts...)
	default:
		own := make([]tools.Tool, len(tl.Agent.Tools))
		for i, x := range tl.Agent.Tools {
			own[i] = lcTool(x)
		}
		agent := agents.NewOpenAIFunctionsAgent(scriptModel{tl.Agent.Model}, own, agents.NewOpenAIOption().WithSystemMessage(tl.Agent.Instruction))
		child = lc.FromExecutor(tl.Name, tl.Description, agents.NewExecutor(agent, agents.WithMaxIterations(16)), opts...)
	}
	if tl.Background {
		return lc.Backgroundable(child)
	}
	return child
}

// scriptModel is the thin llms.Model over the suite's framework-neutral
// script.
type scriptModel struct{ s *adaptertest.Script }

func (m scriptModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

func (m scriptModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var co llms.CallOptions
	for _, o := range opts {
		o(&co)
	}
	var req adaptertest.Request
	for _, mc := range msgs {
		req.Messages = append(req.Messages, neutralMessage(mc))
	}
	defs := co.Functions
	if len(co.Tools) > 0 {
		defs = nil
		for _, tl := range co.Tools {
			if tl.Function != nil {
				defs = append(defs, *tl.Function)
			}
		}
	}
	for _, d := range defs {
		params, err := json.Marshal(d.Parameters)
		if err != nil {
			return nil, err
		}
		req.Tools = append(req.Tools, adaptertest.ToolDef{Name: d.Name, Description: d.Description, Parameters: params})
	}
	r, err := m.s.Reply(ctx, req)
	if err != nil {
		return nil, err
	}
	choice := &llms.ContentChoice{Content: r.Text, StopReason: "stop"}
	if len(r.Calls) > 0 {
		choice.StopReason = "tool_calls"
		for _, c := range r.Calls {
			choice.ToolCalls = append(choice.ToolCalls, llms.ToolCall{ID: c.ID, Type: "function",
				FunctionCall: &llms.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
		}
		first := *choice.ToolCalls[0].FunctionCall
		choice.FuncCall = &first
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{choice}}, nil
}

func neutralMessage(mc llms.MessageContent) adaptertest.Message {
	m := adaptertest.Message{Role: map[llms.ChatMessageType]adaptertest.Role{
		llms.ChatMessageTypeSystem: adaptertest.RoleSystem, llms.ChatMessageTypeHuman: adaptertest.RoleUser,
		llms.ChatMessageTypeGeneric: adaptertest.RoleUser, llms.ChatMessageTypeAI: adaptertest.RoleAssistant,
		llms.ChatMessageTypeTool: adaptertest.RoleTool, llms.ChatMessageTypeFunction: adaptertest.RoleTool,
	}[mc.Role]}
	var part func(p llms.ContentPart)
	part = func(p llms.ContentPart) {
		switch p := p.(type) {
		case llms.TextContent:
			m.Text += p.Text
		case llms.ToolCall:
			c := adaptertest.Call{ID: p.ID}
			if p.FunctionCall != nil {
				c.Name, c.Arguments = p.FunctionCall.Name, p.FunctionCall.Arguments
			}
			m.ToolCalls = append(m.ToolCalls, c)
		case llms.ToolCallResponse:
			m.ToolCallID, m.Text = p.ToolCallID, m.Text+p.Content
		case llms.CachedContent:
			m.Cached = true
			part(p.ContentPart)
		}
	}
	for _, p := range mc.Parts {
		part(p)
	}
	return m
}
