// Command research is agentwork's research demo on an Eino coordinator: a
// ChatModelAgent with the agentwork middleware, an ordinary tool, two
// backgroundable researcher agents (ChatModelAgents with the child
// middleware) and a backgroundable dataset fetch. On the embedded scripted
// model (the default: no key, no network) the coordinator launches both
// researches and the fetch in the background, sees the status block,
// steers one research, cancels the other, awaits a result with a timeout
// and answers; the transcript shows each step.
//
// Environment: OPENAI_API_KEY (+ OPENAI_MODEL, default gpt-4o-mini, and
// OPENAI_BASE_URL) runs every agent on eino-ext's OpenAI chat model
// instead.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/cloudwego/eino-ext/components/model/openai"
	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/agentwork/agentwork/adapters/eino"
	"github.com/agentwork/agentwork/work"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, os.Getenv("OPENAI_API_KEY")); err != nil {
		fmt.Fprintln(os.Stderr, "research:", err)
		os.Exit(1)
	}
}

const task = "Compare the histories of Go and Rust: research both in the background, fetch the language-adoption dataset, and summarize."

// run runs the demo, printing its transcript to w: on the scripted model,
// or on OpenAI when key is set.
func run(ctx context.Context, w io.Writer, key string) error {
	sup := work.New()
	defer sup.Close(context.Background())
	var coordModel, childModel model.ToolCallingChatModel
	gate := newGate()
	if key != "" {
		m, err := openAI(ctx, key)
		if err != nil {
			return err
		}
		coordModel, childModel = m, m
		close(gate.release)
	} else {
		coordModel, childModel = demoScript(gate)
	}
	researcher := func(name, desc string) (*eino.Child, error) {
		a, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
			Name: name, Description: desc, Model: childModel,
			Instruction: "You research one topic and answer in two sentences.",
			ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{gate.tool()}}},
			Handlers:    []adk.ChatModelAgentMiddleware{eino.ChildMiddleware()},
		})
		return eino.FromAgent(a), err
	}
	goR, err := researcher("research_go", "Researches the history of Go.")
	if err != nil {
		return err
	}
	rustR, err := researcher("research_rust", "Researches the history of Rust.")
	if err != nil {
		return err
	}
	fetch := eino.NewFunction("fetch_dataset", "Fetches a dataset by name.", func(ctx context.Context, in string) (string, error) {
		return "dataset " + in + ": 1,204 rows", nil
	})
	clock, err := utils.InferTool("clock", "Tells the time.", func(context.Context, struct{}) (string, error) {
		return "2026-06-01T12:00:00Z", nil
	})
	if err != nil {
		return err
	}
	mw := eino.New(sup)
	defer mw.Release()
	coord, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "coordinator", Description: "Coordinates research.", Model: coordModel,
		Instruction: "You coordinate research. Run long research in the background and keep working.",
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{
			clock, eino.Backgroundable(goR), eino.Backgroundable(rustR), eino.Backgroundable(fetch),
		}}},
		Handlers: []adk.ChatModelAgentMiddleware{mw},
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "user: %s\n", task)
	iter := adk.NewRunner(ctx, adk.RunnerConfig{Agent: coord}).Run(ctx, []adk.Message{schema.UserMessage(task)})
	for {
		ev, ok := iter.Next()
		if !ok {
			return nil
		}
		if ev.Err != nil {
			return ev.Err
		}
		if ev.Output == nil || ev.Output.MessageOutput == nil {
			continue
		}
		msg, err := ev.Output.MessageOutput.GetMessage()
		if err != nil {
			return err
		}
		print(w, msg)
	}
}

// print writes one message of the coordinator's run.
func print(w io.Writer, msg *schema.Message) {
	switch {
	case msg.Role == schema.Tool:
		fmt.Fprintf(w, "  <- %s: %s\n", msg.ToolName, oneLine(msg.Content))
	case len(msg.ToolCalls) > 0:
		for _, c := range msg.ToolCalls {
			fmt.Fprintf(w, "coordinator -> %s %s\n", c.Function.Name, c.Function.Arguments)
		}
	default:
		fmt.Fprintf(w, "coordinator: %s\n", msg.Content)
	}
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " / ") }

func openAI(ctx context.Context, key string) (model.ToolCallingChatModel, error) {
	name := os.Getenv("OPENAI_MODEL")
	if name == "" {
		name = "gpt-4o-mini"
	}
	return openai.NewChatModel(ctx, &openai.ChatModelConfig{APIKey: key, Model: name, BaseURL: os.Getenv("OPENAI_BASE_URL"), Timeout: 2 * time.Minute})
}
