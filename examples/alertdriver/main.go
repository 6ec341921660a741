// Command alertdriver puts a real work.Engine into one of the states the
// alert rules in dashboards/alerts watch, serves its Prometheus metrics and
// live status page, and holds the state until it is told to release it. The
// dashboards integration test (make integration) runs one per state against
// a real Prometheus to prove that each alert fires while the state holds and
// resolves once it is released. It is also a small example of serving
// /metrics and /statusz from an application.
//
//	alertdriver -addr 127.0.0.1:9465 -state queued -clock-speed 60
//
// States (-state):
//
//	failure-ratio     every 100 ms a Work of target flaky runs and fails;
//	                  after release they complete. Each reports two
//	                  updates first, and its Spec allows one: accepted
//	                  and refused (count) updates, which no alert watches
//	queued            limit 1: holder runs until release, waiter waits queued
//	                  behind it
//	cancel-requested  stuck runs, is asked to cancel and ignores it until
//	                  release (it then returns and ends cancelled)
//	slots-full        limit 2: holder running, stuck cancel-requested (both
//	                  hold a slot), waiter queued behind them
//	orphaned          every 500 ms a fresh engine is shut down (grace 0)
//	                  while its Work of target orphan ignores cancellation:
//	                  Shutdown abandons it (agentwork_work_orphaned_total);
//	                  after release no more are made and the abandoned
//	                  children return. Meanwhile a Work of target spender
//	                  runs from the owner's budget pool, spends tokens, turns
//	                  and a tool call and runs out of turns (the budget
//	                  metrics, which no alert watches)
//	approval-pending  a Work of target gated needs approval and waits for it
//	                  unanswered (queued, outside the dispatch queue, no
//	                  slot); after release the approver role approves it and
//	                  it runs and completes. Meanwhile an external job of
//	                  target batch waits (running, no slot, polled with
//	                  backoff) until release, when it answers done
//
// Other flags:
//
//	-addr 127.0.0.1:0     where to serve (host defaults to 127.0.0.1)
//	-clock-speed 1        the engine's clock runs this many times faster
//	                      than real time, so that ages reach the alerts'
//	                      thresholds (5, 10 and 30 minutes) in seconds
//	-environment test     the deployment.environment.name resource attribute,
//	                      exported as target_info
//
// Endpoints: /metrics, /statusz (?format=json), /driver (JSON: the state,
// whether it is ready and released, and the live Works it holds with the
// state each is in) and POST /driver/release (idempotent). The driver
// exports no traces and runs no model; its children hold no content.
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"

	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/telemetry/promexport"
	"github.com/agentwork/agentwork/work"
)

// serviceName is the driver's service.name (exported in target_info).
const serviceName = "agentwork-alertdriver"

type config struct {
	addr        string
	state       string
	clockSpeed  float64
	environment string
}

func main() {
	var cfg config
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:0", "serve /metrics, /statusz and /driver on this address (host defaults to 127.0.0.1)")
	flag.StringVar(&cfg.state, "state", "", "the state to hold: failure-ratio, queued, cancel-requested, slots-full, orphaned or approval-pending")
	flag.Float64Var(&cfg.clockSpeed, "clock-speed", 1, "run the engine's clock this many times faster than real time (>= 1)")
	flag.StringVar(&cfg.environment, "environment", "test", "deployment.environment.name of the driver's resource (target_info)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, cfg, nil); err != nil {
		fmt.Fprintln(os.Stderr, "alertdriver:", err)
		os.Exit(1)
	}
}

// run serves and holds cfg.state until ctx is done. When ready is not nil
// it receives the address served once the state is set up.
func run(ctx context.Context, out io.Writer, cfg config, ready chan<- string) error {
	switch cfg.state {
	case stateFailureRatio, stateQueued, stateCancelRequested, stateSlotsFull, stateOrphaned, stateApproval:
	default:
		return fmt.Errorf("-state %q: want failure-ratio, queued, cancel-requested, slots-full, orphaned or approval-pending", cfg.state)
	}
	if cfg.clockSpeed < 1 {
		return fmt.Errorf("-clock-speed %v: want >= 1", cfg.clockSpeed)
	}
	res, err := resource.New(ctx, resource.WithAttributes(
		semconv.ServiceName(serviceName),
		semconv.ServiceInstanceID(newInstanceID()),
		semconv.DeploymentEnvironmentName(cfg.environment),
	))
	if err != nil {
		return err
	}
	exp, err := promexport.New(promexport.WithTargetInfo(res))
	if err != nil {
		return err
	}
	defer func() { _ = exp.Shutdown(context.Background()) }()
	obs, err := telemetry.New(telemetry.WithMeterProvider(exp.MeterProvider()), telemetry.WithoutTracing())
	if err != nil {
		return err
	}
	defer func() { _ = obs.Unregister() }()

	maxRunning := 0 // the default
	switch cfg.state {
	case stateQueued:
		maxRunning = 1
	case stateSlotsFull:
		maxRunning = 2
	}
	d := &driver{
		sup: work.New(work.WithObserver(obs), work.WithClock(newFastClock(cfg.clockSpeed)),
			work.WithMaxRunning(maxRunning), work.WithMaxStarts(0), work.WithDefaultBudget(work.Budget{MaxDuration: -1})),
		obs: obs, owner: work.NewOwner("driver"), state: cfg.state,
		release: make(chan struct{}), shutdown: make(chan struct{}),
	}
	var wg sync.WaitGroup
	defer func() {
		close(d.shutdown)
		wg.Wait()
		closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = d.sup.Close(closeCtx)
	}()

	addr := cfg.addr
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", exp.Handler())
	mux.Handle("/statusz", obs.StatusHandler())
	mux.HandleFunc("/driver", d.serveStatus)
	mux.HandleFunc("/driver/release", d.serveRelease)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutCtx)
		<-served
	}()
	fmt.Fprintf(out, "alertdriver: state %s, clock speed %g, serving http://%s/metrics, /statusz and /driver\n", cfg.state, cfg.clockSpeed, ln.Addr())

	if err := d.setUp(ctx, &wg); err != nil {
		return err
	}
	fmt.Fprintf(out, "alertdriver: state %s ready\n", cfg.state)
	if ready != nil {
		ready <- ln.Addr().String()
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-served:
		return err
	}
}

// newInstanceID returns a random UUID (version 4) naming this process.
func newInstanceID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
