// Command restateapp is what a user of the Restate runner builds: one
// binary that is a worker (-role worker: a deployment serving the
// researcher child and the registry) or a coordinator (-role coordinator:
// an agent that can start the researcher in the background), each
// reporting to a telemetry.Observer (traces and metrics through the global
// OpenTelemetry providers, logs through slog).
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

	"github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
)

func research(ctx context.Context, topic string) (string, error) {
	work.ReportProgress(ctx, 1, 1)
	return "notes on " + topic, nil
}

func main() {
	role := flag.String("role", "worker", "worker or coordinator")
	ingress := flag.String("ingress", "http://127.0.0.1:8080", "the Restate ingress")
	admin := flag.String("admin", "http://127.0.0.1:9070", "the Restate admin API")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	obs, err := telemetry.New()
	if err != nil {
		log.Fatal(err)
	}
	opts := []restate.Option{restate.WithIngress(*ingress), restate.WithAdmin(*admin), restate.WithOptions(work.WithObserver(obs))}

	switch *role {
	case "worker":
		w, err := restate.NewWorker(map[string]restate.Child{
			"researcher": {Kind: work.KindFunction, Run: research},
		}, append(opts, restate.WithRegistry())...)
		if err != nil {
			log.Fatal(err)
		}
		if err := w.Start(ctx); err != nil {
			log.Fatal(err)
		}
		<-ctx.Done()
		w.Stop()
	case "coordinator":
		eng := restate.New(opts...)
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
