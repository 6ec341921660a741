package restate_test

import (
	"context"
	"log"
	"os"
	"os/signal"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
)

// A worker process serves the children it can run (and, WithRegistry, the
// owners' and the Works' objects) as a Restate deployment, registered with
// the admin API, until it is told to stop. (It needs a Restate server:
// compiled, not run, by go test.)
func ExampleNewWorker() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	obs, err := telemetry.New() // every process reports to its own Observer
	if err != nil {
		log.Fatal(err)
	}
	w, err := restate.NewWorker(map[string]restate.Child{
		"research": {Kind: work.KindFunction, Run: func(ctx context.Context, topic string) (string, error) {
			return "notes on " + topic, nil
		}},
	}, restate.WithIngress("http://127.0.0.1:8080"), restate.WithAdmin("http://127.0.0.1:9070"),
		restate.WithRegistry(), restate.WithOptions(work.WithObserver(obs)))
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer w.Stop()
	<-ctx.Done()
}

// A coordinator process starts Work on the Engine, which replaces
// work.New() (give it to langchaingo.Prepare); any process can read the
// result. (It needs a Restate server and a worker: compiled, not run, by
// go test.)
func ExampleNew() {
	ctx := context.Background()
	eng := restate.New(restate.WithIngress("http://127.0.0.1:8080"), restate.WithAdmin("http://127.0.0.1:9070"))
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
