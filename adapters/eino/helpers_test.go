package eino_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"go.uber.org/goleak"

	"github.com/agentwork/agentwork/adapters/eino"
	"github.com/agentwork/agentwork/adapters/eino/scripted"
	"github.com/agentwork/agentwork/work"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newSup returns an in-process engine closed when the test ends.
func newSup(t testing.TB, opts ...work.Option) *work.Engine {
	t.Helper()
	sup := work.New(opts...)
	t.Cleanup(func() { _ = sup.Close(context.Background()) })
	return sup
}

// newAgent builds a ChatModelAgent named name on m with tools and handlers.
func newAgent(t testing.TB, name string, m model.BaseChatModel, tools []tool.BaseTool, handlers ...adk.ChatModelAgentMiddleware) *adk.ChatModelAgent {
	t.Helper()
	a, err := adk.NewChatModelAgent(context.Background(), &adk.ChatModelAgentConfig{
		Name:        name,
		Description: "The " + name + " agent.",
		Instruction: "You are the " + name + ".",
		Model:       m,
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: tools}},
		Handlers:    handlers,
	})
	if err != nil {
		t.Fatalf("NewChatModelAgent: %v", err)
	}
	return a
}

// run runs agent with input and returns its last assistant text, the
// tool results it saw, in order, and the run's error.
func run(ctx context.Context, agent adk.Agent, input string) (answer string, toolResults []string, err error) {
	iter := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Run(ctx, []adk.Message{schema.UserMessage(input)})
	for {
		ev, ok := iter.Next()
		if !ok {
			return answer, toolResults, err
		}
		if ev.Err != nil {
			err = ev.Err
			continue
		}
		if ev.Output == nil || ev.Output.MessageOutput == nil {
			continue
		}
		msg, gerr := ev.Output.MessageOutput.GetMessage()
		if gerr != nil {
			err = gerr
			continue
		}
		switch msg.Role {
		case schema.Tool:
			toolResults = append(toolResults, msg.Content)
		case schema.Assistant:
			if len(msg.ToolCalls) == 0 {
				answer = msg.Content
			}
		}
	}
}

// mustRun is run that fails the test on an error.
func mustRun(t testing.TB, agent adk.Agent, input string) (string, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	answer, results, err := run(ctx, agent, input)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return answer, results
}

// wireRef is a decoded work.ref reply.
type wireRef struct {
	Kind       string `json:"kind"`
	ID         string `json:"id"`
	TargetID   string `json:"targetId"`
	Guarantees struct {
		Execution string `json:"execution"`
		Rejoin    string `json:"rejoin"`
	} `json:"guarantees"`
}

// ref decodes a work.ref reply.
func ref(t testing.TB, s string) wireRef {
	t.Helper()
	var r wireRef
	if err := json.Unmarshal([]byte(s), &r); err != nil || r.Kind != "work.ref" {
		t.Fatalf("not a work.ref: %q (%v)", s, err)
	}
	return r
}

// workCall is a scripted call of the work tool.
func workCall(action, id string, extra ...string) scripted.Step {
	args := `{"action":"` + action + `"`
	if id != "" {
		args += `,"id":"` + id + `"`
	}
	for i := 0; i+1 < len(extra); i += 2 {
		args += `,"` + extra[i] + `":"` + extra[i+1] + `"`
	}
	return scripted.Call("work", args+"}")
}

// toolNames returns the names of a request's tools.
func toolNames(r scripted.Request) []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Name)
	}
	return out
}

// countIn counts the messages of r whose content contains s.
func countIn(r scripted.Request, s string) int {
	n := 0
	for _, m := range r.Messages {
		if strings.Contains(m.Text, s) {
			n++
		}
	}
	return n
}

// echo is a function child that answers "echo: <input>".
func echo(name string, opts ...eino.ChildOption) *eino.Child {
	return eino.NewFunction(name, "Echoes its input.", func(_ context.Context, in string) (string, error) {
		return "echo: " + in, nil
	}, opts...)
}
