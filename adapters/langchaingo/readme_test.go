package langchaingo_test

// The README's Go code, compiled here; TestReadme keeps each region equal to
// its README block, and Example_readme runs the program against a fake
// OpenAI server (providertest) playing both agents.

import (
	"time" // readmeAutoBackground's

	"github.com/tmc/langchaingo/llms" // readmeBudgets's; the program's imports are its own
)

// README:program
import (
	"context"
	"fmt"
	"github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/work"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms/openai"
	"github.com/tmc/langchaingo/tools"
)

func main() {
	llm, err := openai.New() // reads OPENAI_API_KEY; any llms.Model that calls tools will do
	if err != nil {
		panic(err)
	}
	researcher := langchaingo.FromExecutor("researcher", "Researches a topic.", agents.NewExecutor(agents.NewOpenAIFunctionsAgent(llm, nil)))
	agent, _, err := langchaingo.Retrofit(context.Background(), work.New(), agents.NewOpenAIFunctionsAgent(llm, []tools.Tool{langchaingo.Backgroundable(researcher)}))
	if err != nil {
		panic(err)
	}
	fmt.Println(chains.Run(context.Background(), agents.NewExecutor(agent), "How did Go's goroutine scheduler evolve?"))
}

// README:end

// readmeBudgets is the README's "Limits and budgets" code.
func readmeBudgets(ctx context.Context, sup *work.Engine, llm llms.Model, exec *agents.Executor, ts []tools.Tool) (*langchaingo.Kit, error) {
	// README:budgets
	researcher := langchaingo.FromExecutor("researcher", "Researches a topic.", exec,
		langchaingo.WithBudget(work.Budget{MaxTurns: 6, MaxToolCalls: 10, MaxTokens: 50_000}))
	kit, err := langchaingo.Prepare(ctx, sup, llm, append(ts, langchaingo.Backgroundable(researcher)),
		langchaingo.WithPool(work.Budget{MaxTurns: 20, MaxTokens: 200_000}))
	// README:end
	return kit, err
}

// readmeAutoBackground is the README's "Long calls move to the background
// (opt-in)" code.
func readmeAutoBackground(ctx context.Context, sup *work.Engine, llm llms.Model, checkFn func(context.Context, string) (string, error)) (*langchaingo.Kit, error) {
	// README:autobg
	check := langchaingo.NewFunction("check_citations", "Checks a brief's sources.", checkFn,
		langchaingo.WithAutoBackground(30*time.Second)) // this child's bound
	kit, err := langchaingo.Prepare(ctx, sup, llm, []tools.Tool{langchaingo.Backgroundable(check)},
		langchaingo.WithDefaultAutoBackground(2*time.Minute)) // every backgroundable child without its own
	// README:end
	return kit, err
}
