package temporal_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/temporaltest"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
)

// server starts an in-process Temporal server for t, with the owner search
// attribute registered.
func server(t *testing.T) client.Client {
	c, _, _ := serverWithAddr(t)
	return c
}

// serverWithAddr also returns the server's frontend address and namespace,
// for worker processes.
func serverWithAddr(t *testing.T) (client.Client, string, string) {
	t.Helper()
	srv := temporaltest.NewServer(temporaltest.WithT(t))
	c := srv.GetDefaultClient()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace:        srv.GetDefaultNamespace(),
		SearchAttributes: map[string]enumspb.IndexedValueType{temporal.OwnerSearchAttribute: enumspb.INDEXED_VALUE_TYPE_KEYWORD},
	})
	if err != nil {
		t.Fatalf("registering the search attribute: %v", err)
	}
	return c, srv.GetFrontendHostPort(), srv.GetDefaultNamespace()
}

var queues atomic.Int64

type harness struct{ c client.Client }

func (h harness) NewEngine(t *testing.T, cfg enginetest.Config) work.Engine {
	opts := []temporal.Option{
		temporal.WithTaskQueue("conformance-" + strconv.FormatInt(queues.Add(1), 10)),
		temporal.WithMaxRunning(cfg.MaxRunning), temporal.WithMaxOutstanding(cfg.MaxOutstanding),
		temporal.WithMaxStarts(cfg.MaxStarts), temporal.WithMaxDepth(cfg.MaxDepth),
		temporal.WithMaxDuration(cfg.MaxDuration), temporal.WithMaxResultBytes(cfg.MaxResultBytes),
		temporal.WithRetention(cfg.Retain), temporal.WithHeartbeatTimeout(2 * time.Second),
	}
	targets := map[string]temporal.Target{}
	for label, c := range cfg.Children {
		targets[label] = temporal.Target{Kind: c.Kind, Run: c.Run}
	}
	w, err := temporal.NewWorker(h.c, targets, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	e := temporal.New(h.c, opts...)
	t.Cleanup(func() {
		_ = e.Close(context.Background())
		w.Stop()
	})
	return e
}

func (harness) Capabilities() enginetest.Capabilities {
	return enginetest.Capabilities{
		Guarantees:     work.Guarantees{Execution: "durable", Rejoin: "durable"},
		Attempt:        1,
		ExactWaitClock: true,
	}
}

// TestConformance runs the engine conformance suite against the Temporal
// runner on a real (in-process) Temporal server.
func TestConformance(t *testing.T) {
	enginetest.Run(t, harness{server(t)})
}
