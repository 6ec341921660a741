package langchaingo_test

// README:begin
import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
	"github.com/tmc/langchaingo/tools"

	"github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/work"
)

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) error {
	llm, err := openai.New(openai.WithModel("gpt-4o-mini")) // reads OPENAI_API_KEY; see "Providers" for the others
	if err != nil {
		return err
	}
	sup := work.New() // one per process; work.WithObserver(...) adds traces, metrics and logs
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := sup.Close(closeCtx); err != nil { // cancels what is still running and waits
			log.Print(err)
		}
	}()
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

// README:end
