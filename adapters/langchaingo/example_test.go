package langchaingo_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/work"
)

// A OneShot coordinator starts a long function in the background, reads
// its result with the work tool and answers. The coordinator's model is
// scripted: it finds the work id and the result in what it was sent.
func ExamplePrepare() {
	ctx := context.Background()
	sup := work.New()
	defer sup.Close(ctx)

	render := lc.NewFunction("render_report", "Renders a quarterly report (slow).",
		func(ctx context.Context, quarter string) (string, error) {
			return "Report " + quarter + ": revenue up 4%.", nil
		})

	workID := regexp.MustCompile(`"kind":"work\.ref","id":"([0-9a-f]{32})"`)
	lastObservation := func(req scripted.Request) string {
		text := req.Messages[0].Text()
		return strings.TrimSpace(text[strings.LastIndex(text, "Observation: ")+len("Observation: "):])
	}
	llm := scripted.New(
		scripted.ReActCall("render_report", `{"input":"Q3","run_in_background":true}`),
		scripted.Func(func(req scripted.Request) scripted.Step {
			id := workID.FindStringSubmatch(req.Text())[1]
			return scripted.ReActCall("work", `{"action":"result","id":"`+id+`","timeout":"10s"}`)
		}),
		scripted.Func(func(req scripted.Request) scripted.Step {
			return scripted.ReActFinal("The report is ready. " + lastObservation(req))
		}),
	)

	kit, err := lc.Prepare(ctx, sup, llm, []tools.Tool{lc.Backgroundable(render)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer kit.Release()
	for _, t := range kit.Tools() {
		fmt.Println("tool:", t.Name())
	}

	agent := agents.NewOneShotAgent(kit.Model(), kit.Tools())
	answer, err := chains.Run(ctx, agents.NewExecutor(agent), "Render the Q3 report.")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(answer)
	// Output:
	// tool: render_report
	// tool: work
	// The report is ready. Report Q3: revenue up 4%.
}
