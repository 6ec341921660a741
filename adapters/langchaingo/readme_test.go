package langchaingo_test

// The README's Go code, compiled here; TestReadme keeps each region equal to
// its README block, and Example_readme runs the program on its offline model.

// README:program
import (
	"context"
	"fmt"
	"log"
	"os"
	"regexp"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
	"github.com/tmc/langchaingo/tools"

	"github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/work"
)

func main() {
	llm := offline() // a scripted model that plays both agents, without a key
	if os.Getenv("OPENAI_API_KEY") != "" {
		var err error
		if llm, err = openai.New(openai.WithModel("gpt-4o-mini")); err != nil { // see "Providers" for the others
			log.Fatal(err)
		}
	}
	if err := run(context.Background(), llm); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, llm llms.Model) error {
	sup := work.New() // one per process; work.WithObserver(...) adds traces, metrics and logs
	defer sup.Close(context.Background())
	answer, err := research(ctx, sup, llm, "How did Go's goroutine scheduler evolve?")
	if err != nil {
		return err
	}
	fmt.Println(answer)
	return nil
}

// research runs one coordinator agent: it can start the researcher in the
// background, keep working, and read the report with the work tool.
func research(ctx context.Context, sup *work.Supervisor, llm llms.Model, task string) (string, error) {
	researcher := langchaingo.FromExecutor("researcher", "Researches a topic and returns a short report.",
		agents.NewExecutor(agents.NewOpenAIFunctionsAgent(llm, []tools.Tool{tools.Calculator{}}), agents.WithMaxIterations(8)))

	kit, err := langchaingo.Prepare(ctx, sup, llm, []tools.Tool{
		tools.Calculator{},                     // an ordinary tool: untouched
		langchaingo.Backgroundable(researcher), // a child that can run in the background
	})
	if err != nil {
		return "", err
	}
	defer kit.Release() // this agent instance is done: cancel and forget its work

	agent := agents.NewOpenAIFunctionsAgent(kit.Model(), kit.Tools()) // or NewOneShotAgent
	// Each look at background work is a model turn: leave room for them.
	executor := agents.NewExecutor(agent, agents.WithMaxIterations(15))
	return chains.Run(ctx, executor, task)
}

// offline scripts both agents on one model: the requests offered the work
// tool are the coordinator's, the others the researcher's.
func offline() llms.Model {
	ref := regexp.MustCompile(`"kind":"work\.ref","id":"([0-9a-f]{32})"`)
	coordinator := scripted.New(
		// Start the researcher in the background,
		scripted.ToolCall("researcher", `{"input":"the Go scheduler's history","run_in_background":true}`),
		// wait up to 10 s for its report,
		scripted.Func(func(req scripted.Request) scripted.Step {
			id := ref.FindStringSubmatch(req.Text())[1]
			return scripted.ToolCall("work", `{"action":"result","id":"`+id+`","timeout":"10s"}`)
		}),
		// and answer with it (the last message is the status block, the one before it the report).
		scripted.Func(func(req scripted.Request) scripted.Step {
			return scripted.Text("Brief: " + req.Messages[len(req.Messages)-2].Text())
		}),
	)
	researcher := scripted.New(scripted.Text("Go 1.1 introduced per-P run queues with work stealing."))
	return scripted.Route(
		scripted.When(scripted.Declares("work"), coordinator),
		scripted.Otherwise(researcher),
	)
}

// README:end

// readmeBudgets is the README's "Limits and budgets" code.
func readmeBudgets(ctx context.Context, sup *work.Supervisor, llm llms.Model, exec *agents.Executor, ts []tools.Tool) (*langchaingo.Kit, error) {
	// README:budgets
	researcher := langchaingo.FromExecutor("researcher", "Researches a topic.", exec,
		langchaingo.WithBudget(work.Budget{MaxTurns: 6, MaxToolCalls: 10, MaxTokens: 50_000}))
	kit, err := langchaingo.Prepare(ctx, sup, llm, append(ts, langchaingo.Backgroundable(researcher)),
		langchaingo.WithPool(work.Budget{MaxTurns: 20, MaxTokens: 200_000}))
	// README:end
	return kit, err
}
