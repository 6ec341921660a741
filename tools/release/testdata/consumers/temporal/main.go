// Command temporalapp is what a user of the Temporal runner builds: one
// binary that is a worker (-role worker: it runs the researcher child) or
// a coordinator (-role coordinator: an agent that can start the
// researcher in the background), each reporting to a telemetry.Observer
// (traces and metrics through the global OpenTelemetry providers, logs
// through slog).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms/openai"
	"github.com/tmc/langchaingo/tools"
	"go.temporal.io/sdk/client"

	"github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
)

func research(ctx context.Context, topic string) (string, error) {
	work.ReportProgress(ctx, 1, 1)
	return "notes on " + topic, nil
}

func main() {
	role := flag.String("role", "worker", "worker or coordinator")
	hostPort := flag.String("temporal", "127.0.0.1:7233", "the Temporal frontend")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	obs, err := telemetry.New()
	if err != nil {
		log.Fatal(err)
	}
	c, err := client.Dial(client.Options{HostPort: *hostPort})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	switch *role {
	case "worker":
		w, err := temporal.NewWorker(c, map[string]temporal.Child{
			"researcher": {Kind: work.KindFunction, Run: research},
		}, temporal.WithOptions(work.WithObserver(obs)))
		if err != nil {
			log.Fatal(err)
		}
		if err := w.Start(); err != nil {
			log.Fatal(err)
		}
		<-ctx.Done()
		w.Stop()
	case "coordinator":
		eng := temporal.New(c, temporal.WithOptions(work.WithObserver(obs)))
		defer eng.Close(context.Background())
		llm, err := openai.New()
		if err != nil {
			log.Fatal(err)
		}
		researcher := langchaingo.NewFunction("researcher", "Researches a topic.", research)
		kit, err := langchaingo.Prepare(ctx, eng, llm, []tools.Tool{langchaingo.Backgroundable(researcher)},
			langchaingo.WithOwner("coordinator-1"))
		if err != nil {
			log.Fatal(err)
		}
		defer kit.Release()
		fmt.Println(chains.Run(ctx, agents.NewExecutor(agents.NewOpenAIFunctionsAgent(kit.Model(), kit.Tools())), "Research Go's scheduler."))
	default:
		log.Fatalf("-role %q: worker or coordinator", *role)
	}
}
