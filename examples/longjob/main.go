// Command longjob shows a function-backed backgroundable tool, a long job,
// in a OneShot agent. On the embedded scripted model (no keys, no network)
// the agent starts render_report in the background, checks its status
// while it runs, awaits its result with the work tool and answers, and the
// program prints a short transcript.
//
// The job renders its report in three steps and stops early if its
// context is cancelled. So that the transcript is the same on every run,
// it renders its second and third steps only once the coordinator has
// seen it running (a real job would simply take its time).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/work"
)

const task = "Render the Q3 sales report and tell me when it is ready."

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "longjob:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer) error {
	sup := work.New()
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = sup.Close(closeCtx)
	}()

	seen := make(chan struct{}) // closed once the coordinator has seen the job running
	var once sync.Once
	renderReport := lc.NewFunction("render_report", "Renders a sales report for a quarter (a long job).",
		func(ctx context.Context, quarter string) (string, error) {
			var sections []string
			for i, section := range []string{"summary", "figures", "outlook"} {
				if i == 1 {
					select {
					case <-seen:
					case <-ctx.Done():
						return "", ctx.Err()
					}
				}
				sections = append(sections, section)
			}
			return quarter + " report rendered: " + strings.Join(sections, ", ") + ".", nil
		})

	tr := &transcript{w: w}
	kit, err := lc.Prepare(ctx, sup, tr.model(scripted.New(script(func() { once.Do(func() { close(seen) }) })...)),
		[]tools.Tool{lc.Backgroundable(renderReport)})
	if err != nil {
		return err
	}
	defer kit.Release()

	fmt.Fprintf(w, "longjob demo (scripted model, no network)\ntask: %s\n\n", task)
	agent := agents.NewOneShotAgent(kit.Model(), tr.tools(kit.Tools()))
	answer, err := chains.Run(ctx, agents.NewExecutor(agent, agents.WithMaxIterations(6)), task)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	fmt.Fprintf(w, "\n== answer ==\n%s\n", answer)
	return nil
}

var workID = regexp.MustCompile(`"kind":"work\.ref","id":"([0-9a-f]{32})"`)

// script is the coordinator's scripted model, one step per model request.
// With a OneShot agent the model writes each tool's JSON input after
// "Action Input:".
func script(sawRunning func()) []scripted.Step {
	id := func(req scripted.Request) string {
		if m := workID.FindStringSubmatch(req.Text()); m != nil {
			return m[1]
		}
		return ""
	}
	return []scripted.Step{
		scripted.ReActCall("render_report", `{"input":"Q3 sales","run_in_background":true}`),
		scripted.Func(func(req scripted.Request) scripted.Step {
			return scripted.ReActCall("work", `{"action":"status","id":"`+id(req)+`"}`)
		}),
		scripted.Func(func(req scripted.Request) scripted.Step {
			sawRunning()
			return scripted.ReActCall("work", `{"action":"result","id":"`+id(req)+`","timeout":"30s"}`)
		}),
		scripted.Func(func(req scripted.Request) scripted.Step {
			text := req.Messages[0].Text()
			result := strings.TrimSpace(text[strings.LastIndex(text, "Observation: ")+len("Observation: "):])
			return scripted.ReActFinal("Your report is ready. " + result)
		}),
	}
}

// transcript prints each model turn (with the status block the model was
// sent) and each tool call with its reply.
type transcript struct {
	w    io.Writer
	turn int
}

func (t *transcript) model(m llms.Model) llms.Model { return &printingModel{t: t, inner: m} }

type printingModel struct {
	t     *transcript
	inner llms.Model
}

func (p *printingModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, p, prompt, opts...)
}

// GenerateContent runs on the agent's goroutine only: turns never overlap.
func (p *printingModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	p.t.turn++
	fmt.Fprintf(p.t.w, "-- model turn %d --\n", p.t.turn)
	if n := len(msgs); n > 1 {
		for _, part := range msgs[n-1].Parts {
			if text, ok := part.(llms.TextContent); ok && strings.HasPrefix(text.Text, "[background work]") {
				for _, line := range strings.Split(text.Text, "\n") {
					fmt.Fprintf(p.t.w, "   | %s\n", line)
				}
			}
		}
	}
	resp, err := p.inner.GenerateContent(ctx, msgs, opts...)
	if err != nil {
		fmt.Fprintf(p.t.w, "   model error: %v\n", err)
		return resp, err
	}
	for _, line := range strings.Split(resp.Choices[0].Content, "\n") {
		fmt.Fprintf(p.t.w, "   says: %s\n", line)
	}
	return resp, nil
}

func (t *transcript) tools(ts []tools.Tool) []tools.Tool {
	out := make([]tools.Tool, len(ts))
	for i, x := range ts {
		out[i] = printingTool{Tool: x, w: t.w}
	}
	return out
}

type printingTool struct {
	tools.Tool
	w io.Writer
}

func (p printingTool) Call(ctx context.Context, input string) (string, error) {
	out, err := p.Tool.Call(ctx, input)
	fmt.Fprintf(p.w, "   %s -> %s\n", p.Name(), out)
	return out, err
}
