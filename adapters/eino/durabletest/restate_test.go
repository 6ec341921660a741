package durabletest_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentwork/agentwork/adapters/eino/durabletest"
	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/runners/restate/restatetest"
	"github.com/agentwork/agentwork/work"
)

// TestRestate: an Eino agent child runs as durable Work on the Restate
// runner (a real Restate server, restatetest), completes with the
// guidance sent while it ran, and a cancel stops it.
func TestRestate(t *testing.T) {
	srv, err := restatetest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	r := durabletest.NewResearcher(t)
	obs, spans := durabletest.NewObserver(t)
	opts := []restate.Option{restate.WithServicePrefix("eino"), restate.WithIngress(srv.Ingress), restate.WithAdmin(srv.Admin),
		restate.WithRPCTimeout(time.Minute), restate.WithOptions(work.WithObserver(obs))}
	w, err := restate.NewWorker(map[string]restate.Child{"researcher": {Kind: r.Child().Kind(), Run: r.Child().Run}}, append(opts, restate.WithRegistry())...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	eng := restate.New(opts...)
	defer eng.Close(context.Background())
	durabletest.Test(t, r, eng, "eino-restate")
	durabletest.CheckProvider(t, spans)
}
