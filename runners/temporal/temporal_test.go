package temporal_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/runners/temporal/testserver"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
)

// shared is the Temporal dev server of the tests that keep to their own
// owners and task queues (the conformance suite does): started once per
// test binary, so that -count=N repeats them on one server; TestMain
// stops it.
var shared struct {
	mu  sync.Mutex
	srv *testserver.Server
}

// server returns the shared dev server's client (its namespace is
// namespace()), starting the server if need be.
func server(t *testing.T) client.Client {
	t.Helper()
	return sharedServer(t).Client()
}

// sharedServer returns the shared dev server, starting it if need be.
func sharedServer(t *testing.T) *testserver.Server {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv == nil {
		srv, err := testserver.Start()
		if err != nil {
			t.Fatalf("starting the Temporal dev server: %v", err)
		}
		shared.srv = srv
	}
	return shared.srv
}

// namespace is every test server's namespace.
func namespace() string { return testserver.Namespace }

func stopShared() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv != nil {
		shared.srv.Stop()
		shared.srv = nil
	}
}

// serverWithAddr starts a dev server of the test's own (stopped when the
// test ends) and returns its client, frontend address and namespace, for
// worker processes.
func serverWithAddr(t *testing.T) (client.Client, string, string) {
	t.Helper()
	srv, err := testserver.Start()
	if err != nil {
		t.Fatalf("starting the Temporal dev server: %v", err)
	}
	t.Cleanup(srv.Stop)
	return srv.Client(), srv.HostPort, testserver.Namespace
}

var queues atomic.Int64

// conformanceHeartbeat is the conformance Engines' heartbeat timeout:
// long enough for a loaded 2-core machine running the race detector (at
// 3 s, heartbeats that took longer than the SDK allows, 2.4 s, cut
// attempts off under load: ProgressOrder, CancelRacesCompletion),
// short enough that CancelSlowCall, whose child's call outlasts it, takes
// seconds; its third is how long a cancel takes to arrive.
const conformanceHeartbeat = 6 * time.Second

// harness runs the suite's Engines and Workers on c; dc, when set, is
// the converter c was dialed with (WithDataConverter).
type harness struct {
	c  client.Client
	dc converter.DataConverter
}

func (h harness) NewEngine(t *testing.T, cfg enginetest.Config) *work.Engine {
	opts := []temporal.Option{
		temporal.WithTaskQueue("conformance-" + strconv.FormatInt(queues.Add(1), 10)),
		temporal.WithOptions(cfg.Options()...), temporal.WithOptions(work.WithObserver(cfg.Observer)),
		temporal.WithHeartbeatTimeout(conformanceHeartbeat), temporal.WithRPCTimeout(time.Minute),
	}
	if h.dc != nil {
		opts = append(opts, temporal.WithDataConverter(h.dc))
	}
	targets := map[string]temporal.Child{}
	for label, c := range cfg.Children {
		targets[label] = temporal.Child{Kind: c.Kind, Run: c.Run, Job: c.Job}
	}
	w, err := temporal.NewWorker(h.c, targets, opts...)
	if errors.Is(err, work.ErrInvalidLimit) {
		// NewWorker refuses an invalid limit as the Engine does; the
		// Engine alone then shows the refusal (LimitValues).
		e := temporal.New(h.c, opts...)
		t.Cleanup(func() { _ = e.Close(context.Background()) })
		return e
	}
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
		Durable:        true,
		Attempt:        1,
		ExactWaitClock: true,
		Pools:          true,
		// "Delivery is at least once" (the package doc, Telemetry).
		AtLeastOnceEvents: true,
		LivenessTimeout:   conformanceHeartbeat,
	}
}

// TestConformance runs the engine conformance suite against the Temporal
// runner on a real Temporal server (the CLI's dev server), under an
// encryption codec: every client of the suite is dialed with the test
// codec's converter (AES-GCM, codec_test.go), and its Engines and Workers
// are given it (WithDataConverter).
func TestConformance(t *testing.T) {
	c, dc := sharedCodec(t)
	enginetest.Run(t, harness{c, dc})
}
