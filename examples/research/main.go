// Command research is agentwork's main demo: a coordinator agent with an
// ordinary tool, a foreground child and backgroundable researcher children.
// On the embedded scripted model (the default: no keys, no network) it
// launches two researches and a dataset fetch in the background, keeps
// working, sees the status block, steers one research, cancels the other,
// awaits a result with a timeout, launches a publication that needs
// approval (queued until the application, reading the request through
// work.Engine.Pending, approves it; then running) and answers, printing
// a transcript.
//
// Flags and environment:
//
//	-metrics-addr 127.0.0.1:9464   serve Prometheus /metrics and the status page /statusz there; stay up until interrupted
//	-every 5s                      with -metrics-addr: repeat the scenario quietly this often
//	-canary STRING                 plant STRING in prompts, child outputs, failure text and guidance
//	-hold                          scripted model: hold the coordinator after its launches until interrupted
//	-drain 3s                      on exit or SIGINT/SIGTERM: let background work finish this long, then cancel it
//	OPENAI_API_KEY (+ OPENAI_MODEL, OPENAI_BASE_URL)            run on OpenAI instead (default gpt-4o-mini)
//	ANTHROPIC_API_KEY (+ ANTHROPIC_MODEL, ANTHROPIC_BASE_URL)   run on Anthropic (default claude-sonnet-4-5)
//	OLLAMA_HOST (+ OLLAMA_MODEL)                                run on Ollama through its OpenAI-compatible /v1 (default llama3.1)
//	OTEL_EXPORTER_OTLP_ENDPOINT    export traces by OTLP/HTTP
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.metricsAddr, "metrics-addr", "", "serve Prometheus /metrics and the status page /statusz on this address (host defaults to 127.0.0.1) and stay up until interrupted")
	flag.DurationVar(&cfg.every, "every", 5*time.Second, "with -metrics-addr: repeat the scenario quietly this often (scripted model only; 0: no repeats)")
	flag.StringVar(&cfg.canary, "canary", "", "plant this string in prompts, child outputs, failure text and guidance")
	flag.BoolVar(&cfg.hold, "hold", false, "scripted model: hold the coordinator after its launches until interrupted (try Ctrl-C: the shutdown report)")
	flag.DurationVar(&cfg.drain, "drain", defaultDrain, "on exit or interrupt, how long background work may finish before it is cancelled")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "research:", err)
		os.Exit(1)
	}
}
