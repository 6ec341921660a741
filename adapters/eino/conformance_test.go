package eino_test

import (
	"context"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/agentwork/agentwork/adapters/eino"
	"github.com/agentwork/agentwork/adapters/eino/scripted"
	"github.com/agentwork/agentwork/middleware/adaptertest"
)

// TestConformance runs the adapter conformance suite on ChatModelAgent
// coordinators and agent children.
func TestConformance(t *testing.T) {
	adaptertest.Run(t, adaptertest.Adapter{Name: "eino", NewCoordinator: harness{}.newCoordinator})
}

// harness is the suite's harness: a ChatModelAgent with the coordinator's
// Middleware among its Handlers, on the suite's script through the
// scripted package's thin model. Its hooks, nil in TestConformance, let
// broken_conformance_test.go break one of the adapter's rules at a time:
// they wrap the coordinator's Middleware and each agent child's, sharing
// what one coordinator's run and its children saw (shared).
type harness struct {
	coordinator func(adk.ChatModelAgentMiddleware, *shared) adk.ChatModelAgentMiddleware
	child       func(adk.ChatModelAgentMiddleware, *shared) adk.ChatModelAgentMiddleware
}

func (h harness) newCoordinator(_ *testing.T, cfg adaptertest.Config) (adaptertest.Coordinator, error) {
	sh := &shared{}
	mw := eino.New(cfg.Engine, eino.WithOwner(cfg.Owner))
	var handler adk.ChatModelAgentMiddleware = mw
	if h.coordinator != nil {
		handler = h.coordinator(mw, sh)
	}
	ts := make([]tool.BaseTool, len(cfg.Tools))
	for i, tl := range cfg.Tools {
		ts[i] = h.einoTool(tl, sh)
	}
	agent, err := adk.NewChatModelAgent(context.Background(), &adk.ChatModelAgentConfig{
		Name: "coordinator", Description: "The coordinator.", Instruction: cfg.Instruction,
		Model:         scripted.Wrap(cfg.Model),
		ToolsConfig:   adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: ts}},
		Handlers:      []adk.ChatModelAgentMiddleware{handler},
		MaxIterations: cfg.MaxIterations,
	})
	if err != nil {
		return nil, err
	}
	return coord{agent, mw}, nil
}

type coord struct {
	agent adk.Agent
	mw    *eino.Middleware
}

func (c coord) Release() error { return c.mw.Release() }

func (c coord) Run(ctx context.Context, input string) (string, error) {
	answer, _, err := run(ctx, c.agent, input)
	return answer, err
}

// einoTool translates one of the suite's tools.
func (h harness) einoTool(tl adaptertest.Tool, sh *shared) tool.BaseTool {
	var opts []eino.ChildOption
	if tl.ID != "" {
		opts = append(opts, eino.WithID(tl.ID))
	}
	if tl.Schema != nil {
		opts = append(opts, eino.WithSchema(tl.Schema))
	}
	if tl.AutoBackground > 0 {
		opts = append(opts, eino.WithAutoBackground(tl.AutoBackground))
	}
	if tl.BackgroundByDefault {
		opts = append(opts, eino.WithBackgroundDefault())
	}
	var child *eino.Child
	switch tl.Kind {
	case adaptertest.Plain:
		return plainTool{tl}
	case adaptertest.Function:
		child = eino.NewFunction(tl.Name, tl.Description, tl.Func, opts...)
	default:
		own := make([]tool.BaseTool, len(tl.Agent.Tools))
		for i, x := range tl.Agent.Tools {
			own[i] = h.einoTool(x, sh)
		}
		build := func(context.Context) (adk.Agent, error) {
			var handler adk.ChatModelAgentMiddleware = eino.ChildMiddleware()
			if h.child != nil {
				handler = h.child(handler, sh)
			}
			return adk.NewChatModelAgent(context.Background(), &adk.ChatModelAgentConfig{
				Name: tl.Name, Description: tl.Description, Instruction: tl.Agent.Instruction,
				Model:       scripted.Wrap(tl.Agent.Model),
				ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: own}},
				Handlers:    []adk.ChatModelAgentMiddleware{handler},
			})
		}
		if h.child != nil {
			// A wrapped child middleware is not the adapter's type:
			// declare the agent child (its run still needs the
			// adapter's middleware, which the wrapper delegates to).
			child = eino.NewAgent(tl.Name, tl.Description, build, opts...)
			break
		}
		agent, err := build(context.Background())
		if err != nil {
			panic(err)
		}
		child = eino.FromAgent(agent, opts...)
	}
	if tl.Background {
		return eino.Backgroundable(child)
	}
	return child
}

// plainTool is an ordinary tool of the suite, taking one string field.
type plainTool struct{ tl adaptertest.Tool }

func (p plainTool) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: p.tl.Name, Desc: p.tl.Description, ParamsOneOf: schema.NewParamsOneOfByParams(
		map[string]*schema.ParameterInfo{"q": {Type: schema.String}})}, nil
}

func (p plainTool) InvokableRun(ctx context.Context, args string, _ ...tool.Option) (string, error) {
	return p.tl.Func(ctx, args)
}
