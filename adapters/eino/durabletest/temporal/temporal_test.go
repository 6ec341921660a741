package temporal_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentwork/agentwork/adapters/eino/durabletest"
	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/runners/temporal/testserver"
	"github.com/agentwork/agentwork/work"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestTemporal: an Eino agent child runs as durable Work on the Temporal
// runner (the Temporal CLI's dev server, testserver), completes with the
// guidance sent while it ran, and a cancel stops it.
func TestTemporal(t *testing.T) {
	srv, err := testserver.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c := srv.Client()
	r := durabletest.NewResearcher(t)
	obs, spans := durabletest.NewObserver(t)
	// A short heartbeat timeout: a cancel reaches a running child with
	// its next heartbeat.
	opts := []temporal.Option{temporal.WithTaskQueue("eino-durable"), temporal.WithRPCTimeout(time.Minute),
		temporal.WithHeartbeatTimeout(3 * time.Second), temporal.WithOptions(work.WithObserver(obs))}
	w, err := temporal.NewWorker(c, map[string]temporal.Child{"researcher": {Kind: r.Child().Kind(), Run: r.Child().Run}}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	eng := temporal.New(c, opts...)
	defer eng.Close(context.Background())
	durabletest.Test(t, r, eng, "eino-temporal")
	durabletest.CheckProvider(t, spans)
}
