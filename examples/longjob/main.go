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
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/examples/internal/transcript"
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

	tr := &transcript.Transcript{W: w}
	kit, err := lc.Prepare(ctx, sup, tr.Model(scripted.New(script(func() { once.Do(func() { close(seen) }) })...)),
		[]tools.Tool{lc.Backgroundable(renderReport)})
	if err != nil {
		return err
	}
	defer kit.Release()

	fmt.Fprintf(w, "longjob demo (scripted model, no network)\ntask: %s\n\n", task)
	agent := agents.NewOneShotAgent(kit.Model(), tr.Tools(kit.Tools()))
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
