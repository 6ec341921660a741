package scripted_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/tools"

	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
)

// upper is a tools.Tool that upper-cases its input.
type upper struct{}

func (upper) Name() string        { return "upper" }
func (upper) Description() string { return "Upper-cases text." }
func (upper) Call(_ context.Context, input string) (string, error) {
	return strings.ToUpper(input), nil
}

// An OpenAIFunctionsAgent on a scripted model: one tool call, then an answer
// chosen from what the model saw.
func Example() {
	m := scripted.New(
		scripted.FunctionsCall("upper", "hello"),
		scripted.Func(func(req scripted.Request) scripted.Step {
			last := req.LastMessage() // the tool result, in a tool message
			return scripted.Text("The tool said " + last.Text() + ".")
		}),
	)
	agent := agents.NewOpenAIFunctionsAgent(m, []tools.Tool{upper{}})
	out, err := chains.Run(context.Background(), agents.NewExecutor(agent), "Shout hello.")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(out)
	for _, req := range m.Requests() {
		fmt.Printf("request %d: functions %v, last message from %s: %q\n",
			req.Index, req.ToolNames(), req.LastMessage().Role, req.LastMessage().Text())
	}
	// Output:
	// The tool said HELLO.
	// request 0: functions [upper], last message from human: "Shout hello."
	// request 1: functions [upper], last message from tool: "HELLO"
}

// A OneShot (MRKL) agent reads tool calls and answers from text.
func ExampleReActCall() {
	m := scripted.New(
		scripted.ReActCall("upper", "quiet words"),
		scripted.ReActFinal("QUIET WORDS"),
	)
	exec := agents.NewExecutor(agents.NewOneShotAgent(m, []tools.Tool{upper{}}))
	out, err := chains.Run(context.Background(), exec, "Make it loud.")
	fmt.Printf("%q %v\n", out, err)
	second := m.Requests()[1].Text()
	fmt.Println(second[strings.LastIndex(second, "Action:"):])
	// Output:
	// "QUIET WORDS" <nil>
	// Action: upper
	// Action Input: quiet words
	// Observation: QUIET WORDS
}
