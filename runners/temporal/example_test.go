package temporal_test

import (
	"context"
	"log"
	"os"
	"os/signal"

	"go.temporal.io/sdk/client"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
)

// A worker process registers the children it can run and serves them
// until it is told to stop. (It needs a Temporal server: compiled, not
// run, by go test.)
func ExampleNewWorker() {
	c, err := client.Dial(client.Options{HostPort: "127.0.0.1:7233"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	obs, err := telemetry.New() // every process reports to its own Observer
	if err != nil {
		log.Fatal(err)
	}
	w, err := temporal.NewWorker(c, map[string]temporal.Child{
		"research": {Kind: work.KindFunction, Run: func(ctx context.Context, topic string) (string, error) {
			return "notes on " + topic, nil
		}},
	}, temporal.WithOptions(work.WithObserver(obs)))
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Start(); err != nil {
		log.Fatal(err)
	}
	defer w.Stop()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	<-ctx.Done()
}

// A coordinator process starts Work on the Engine, which replaces
// work.New() (give it to langchaingo.Prepare); any process can read the
// result. (It needs a Temporal server and a worker: compiled, not run, by
// go test.)
func ExampleNew() {
	ctx := context.Background()
	c, err := client.Dial(client.Options{HostPort: "127.0.0.1:7233"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	eng := temporal.New(c, temporal.WithRetryable("research"))
	defer eng.Close(ctx)
	owner := work.NewOwner("coordinator-1")
	// A worker runs the child from its label and Input; Run is the
	// in-process body, which the Spec needs all the same (the langchaingo
	// adapter fills both in).
	ref, err := eng.Start(ctx, work.Spec{Owner: owner, Target: work.Target{Label: "research", Kind: work.KindFunction},
		Input: "the Go scheduler", Run: func(context.Context) (string, error) { return "notes on the Go scheduler", nil }})
	if err != nil {
		log.Fatal(err)
	}
	st, out, err := eng.Result(ctx, owner, ref.ID, work.MaxResultWait)
	log.Println(st.State, out, err)
}
