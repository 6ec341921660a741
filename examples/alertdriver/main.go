// Command alertdriver puts a real work.Supervisor into one of the states the
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
//	                  after release they complete
//	queued            limit 1: holder runs until release, waiter waits queued
//	                  behind it
//	cancel-requested  stuck runs, is asked to cancel and ignores it until
//	                  release (it then returns and ends cancelled)
//	slots-full        limit 2: holder running, stuck cancel-requested (both
//	                  hold a slot), waiter queued behind them
//	orphaned          every 500 ms a fresh Supervisor is shut down (grace 0)
//	                  while its Work of target orphan ignores cancellation:
//	                  Shutdown abandons it (agentwork_work_orphaned_total);
//	                  after release no more are made and the abandoned
//	                  children return. Meanwhile a Work of target spender
//	                  runs from the owner's budget pool, spends tokens, turns
//	                  and a tool call and runs out of turns (the budget
//	                  metrics, which no alert watches)
//
// Other flags:
//
//	-addr 127.0.0.1:0     where to serve (host defaults to 127.0.0.1)
//	-clock-speed 1        the Supervisor's clock runs this many times faster
//	                      than real time, so that ages reach the alerts'
//	                      thresholds (5 and 10 minutes) in seconds
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
	"encoding/json"
	"errors"
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

// The states the driver can hold.
const (
	stateFailureRatio    = "failure-ratio"
	stateQueued          = "queued"
	stateCancelRequested = "cancel-requested"
	stateSlotsFull       = "slots-full"
	stateOrphaned        = "orphaned"
)

// The targets the driver's Works run.
const (
	targetFlaky   = "flaky"
	targetHolder  = "holder"
	targetStuck   = "stuck"
	targetWaiter  = "waiter"
	targetOrphan  = "orphan"
	targetSpender = "spender"
)

// failEvery is how often the failure-ratio state runs a Work.
const failEvery = 100 * time.Millisecond

// orphanEvery is how often the orphaned state shuts a Supervisor down.
const orphanEvery = 500 * time.Millisecond

type config struct {
	addr        string
	state       string
	clockSpeed  float64
	environment string
}

func main() {
	var cfg config
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:0", "serve /metrics, /statusz and /driver on this address (host defaults to 127.0.0.1)")
	flag.StringVar(&cfg.state, "state", "", "the state to hold: failure-ratio, queued, cancel-requested, slots-full or orphaned")
	flag.Float64Var(&cfg.clockSpeed, "clock-speed", 1, "run the Supervisor's clock this many times faster than real time (>= 1)")
	flag.StringVar(&cfg.environment, "environment", "test", "deployment.environment.name of the driver's resource (target_info)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, cfg, nil); err != nil {
		fmt.Fprintln(os.Stderr, "alertdriver:", err)
		os.Exit(1)
	}
}

// heldWork is one Work the driver holds in a live state.
type heldWork struct {
	ID     string `json:"id"`
	Target string `json:"target"`
	State  string `json:"state"`
}

// driverStatus is the /driver document.
type driverStatus struct {
	State    string     `json:"state"`
	Ready    bool       `json:"ready"`
	Released bool       `json:"released"`
	Work     []heldWork `json:"work"`
}

// driver holds one state on a Supervisor.
type driver struct {
	sup   *work.Supervisor
	obs   work.Observer // the orphaned state's Supervisors report to it too
	owner work.Owner
	state string

	release  chan struct{} // closed by /driver/release
	shutdown chan struct{} // closed when the driver stops: stuck children return
	relOnce  sync.Once

	mu     sync.Mutex
	ready  bool
	held   []heldWork
	failed error // the first error setting the state up or feeding it
}

// run serves and holds cfg.state until ctx is done. When ready is not nil
// it receives the address served once the state is set up.
func run(ctx context.Context, out io.Writer, cfg config, ready chan<- string) error {
	switch cfg.state {
	case stateFailureRatio, stateQueued, stateCancelRequested, stateSlotsFull, stateOrphaned:
	default:
		return fmt.Errorf("-state %q: want failure-ratio, queued, cancel-requested, slots-full or orphaned", cfg.state)
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

	maxRunning := work.DefaultMaxRunning
	switch cfg.state {
	case stateQueued:
		maxRunning = 1
	case stateSlotsFull:
		maxRunning = 2
	}
	d := &driver{
		sup: work.New(work.WithObserver(obs), work.WithClock(newFastClock(cfg.clockSpeed)),
			work.WithMaxRunning(maxRunning), work.WithMaxStarts(0), work.WithMaxDuration(0)),
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

// setUp puts the Supervisor into the driver's state.
func (d *driver) setUp(ctx context.Context, wg *sync.WaitGroup) error {
	var err error
	switch d.state {
	case stateFailureRatio:
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.feedFlaky(ctx)
		}()
	case stateQueued:
		if err = d.hold(ctx, targetHolder, false); err == nil {
			err = d.queue(ctx)
		}
	case stateCancelRequested:
		err = d.hold(ctx, targetStuck, true)
	case stateSlotsFull:
		if err = d.hold(ctx, targetHolder, false); err == nil {
			if err = d.hold(ctx, targetStuck, true); err == nil {
				err = d.queue(ctx)
			}
		}
	case stateOrphaned:
		// A pool large enough never to refuse the spender in a day.
		if err = d.sup.SetPool(d.owner, work.Budget{MaxTurns: 1_000_000, MaxToolCalls: 1_000_000, MaxTokens: 1_000_000_000}); err != nil {
			break
		}
		if err = d.orphan(ctx); err == nil {
			err = d.spend(ctx)
		}
		if err == nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d.feedOrphans(ctx)
			}()
		}
	}
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.ready = true
	d.mu.Unlock()
	return nil
}

// feedFlaky starts a Work of target flaky every failEvery until ctx is done
// or the driver stops; it fails until release and completes after.
func (d *driver) feedFlaky(ctx context.Context) {
	tick := time.NewTicker(failEvery)
	defer tick.Stop()
	run := func(context.Context) (string, error) {
		select {
		case <-d.release:
			return "done", nil
		default:
			return "", errors.New("alertdriver: failing on purpose")
		}
	}
	for {
		if _, err := d.sup.Start(ctx, work.Spec{Owner: d.owner, Target: work.Target{Label: targetFlaky, Kind: work.KindFunction}, Run: run}); err != nil {
			d.fail(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-d.shutdown:
			return
		case <-tick.C:
		}
	}
}

// feedOrphans makes an orphan and runs a spender every orphanEvery until
// release, ctx is done or the driver stops.
func (d *driver) feedOrphans(ctx context.Context) {
	tick := time.NewTicker(orphanEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.shutdown:
			return
		case <-d.release:
			return
		case <-tick.C:
		}
		if err := d.orphan(ctx); err != nil {
			d.fail(err)
		}
		if err := d.spend(ctx); err != nil {
			d.fail(err)
		}
	}
}

// orphan shuts down a fresh Supervisor, observed like the driver's, while
// its Work of target orphan runs and ignores cancellation until release (or
// until the driver stops): with no shutdown grace, Shutdown abandons it at
// once. The Supervisor is closed by its Shutdown and reports no gauges.
func (d *driver) orphan(ctx context.Context) error {
	sup := work.New(work.WithObserver(d.obs), work.WithShutdownGrace(0), work.WithMaxDuration(0))
	running := make(chan struct{})
	_, err := sup.Start(ctx, work.Spec{Owner: d.owner, Target: work.Target{Label: targetOrphan, Kind: work.KindFunction},
		Run: func(context.Context) (string, error) {
			close(running)
			select { // ignores its context
			case <-d.release:
			case <-d.shutdown:
			}
			return "done", nil
		}})
	if err != nil {
		_ = sup.Close(ctx)
		return fmt.Errorf("start %s: %w", targetOrphan, err)
	}
	select {
	case <-running:
	case <-ctx.Done():
		_ = sup.Close(ctx)
		return ctx.Err()
	}
	cancelled, cancel := context.WithCancel(context.WithoutCancel(ctx))
	cancel()
	rep, err := sup.Shutdown(cancelled)
	if err != nil {
		return err
	}
	if rep.OrphanCount() != 1 {
		select {
		case <-d.release: // released meanwhile: the child may have returned in time
			return nil
		case <-d.shutdown:
			return nil
		default:
		}
		return fmt.Errorf("shutdown orphaned %d, want 1: %v", rep.OrphanCount(), rep)
	}
	return nil
}

// spend runs a Work of target spender from the owner's pool and waits for
// it: an agent child with a budget of one turn that does what an agent
// adapter does at its model-request boundary (a request with its tokens
// and a tool call, then its final request once the turn is used up).
func (d *driver) spend(ctx context.Context) error {
	ref, err := d.sup.Start(ctx, work.Spec{Owner: d.owner, Target: work.Target{Label: targetSpender, Kind: work.KindAgent},
		Budget: work.Budget{MaxTurns: 1},
		Run: func(ctx context.Context) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			if turn, err := ex.BeginRequest(); err != nil || turn.Final {
				return "", fmt.Errorf("first request: %+v, %v", turn, err)
			}
			ex.EndRequest(120, 40, true)
			ex.BeginToolCall()
			if turn, err := ex.BeginRequest(); err != nil || !turn.Final {
				return "", fmt.Errorf("final request: %+v, %v", turn, err)
			}
			ex.EndRequest(60, 20, true)
			return "done", nil
		}})
	if err != nil {
		return fmt.Errorf("start %s: %w", targetSpender, err)
	}
	st, _, err := d.sup.Result(ctx, d.owner, ref.ID, work.MaxResultWait)
	if err != nil {
		return err
	}
	if st.State != work.StateCompleted {
		return fmt.Errorf("%s is %s, want completed", targetSpender, st.State)
	}
	return nil
}

// hold starts a Work of target that runs until release (or until the driver
// stops) and waits until it runs. With cancel it then asks it to cancel: the
// child ignores its cancelled context until release, so the Work stays
// cancel-requested and keeps its slot.
func (d *driver) hold(ctx context.Context, target string, cancel bool) error {
	running := make(chan struct{})
	ref, err := d.sup.Start(ctx, work.Spec{Owner: d.owner, Target: work.Target{Label: target, Kind: work.KindFunction},
		Run: func(ctx context.Context) (string, error) {
			close(running)
			select {
			case <-d.release:
			case <-d.shutdown:
			}
			if err := ctx.Err(); err != nil {
				return "", err
			}
			return "done", nil
		}})
	if err != nil {
		return fmt.Errorf("start %s: %w", target, err)
	}
	select {
	case <-running:
	case <-ctx.Done():
		return ctx.Err()
	}
	state := work.StateRunning
	if cancel {
		r, err := d.sup.Cancel(d.owner, ref.ID)
		if err != nil {
			return fmt.Errorf("cancel %s: %w", target, err)
		}
		if r.State != work.StateCancelRequested {
			return fmt.Errorf("cancel %s: state %s, want %s", target, r.State, work.StateCancelRequested)
		}
		state = r.State
	}
	d.mu.Lock()
	d.held = append(d.held, heldWork{ID: ref.ID, Target: target, State: string(state)})
	d.mu.Unlock()
	return nil
}

// queue starts a Work of target waiter, which must queue behind the held
// ones (every slot is taken); once it runs it completes.
func (d *driver) queue(ctx context.Context) error {
	ref, err := d.sup.Start(ctx, work.Spec{Owner: d.owner, Target: work.Target{Label: targetWaiter, Kind: work.KindFunction},
		Run: func(context.Context) (string, error) { return "done", nil }})
	if err != nil {
		return fmt.Errorf("start %s: %w", targetWaiter, err)
	}
	st, err := d.sup.Status(d.owner, ref.ID)
	if err != nil {
		return err
	}
	if st.State != work.StateQueued {
		return fmt.Errorf("%s is %s, want queued (are the slots not all taken?)", targetWaiter, st.State)
	}
	d.mu.Lock()
	d.held = append(d.held, heldWork{ID: ref.ID, Target: targetWaiter, State: string(work.StateQueued)})
	d.mu.Unlock()
	return nil
}

func (d *driver) fail(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failed == nil {
		d.failed = err
	}
}

func (d *driver) status() driverStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := driverStatus{State: d.state, Ready: d.ready, Work: append([]heldWork{}, d.held...)}
	select {
	case <-d.release:
		s.Released = true
		s.Work = []heldWork{}
	default:
	}
	return s
}

func (d *driver) serveStatus(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	d.mu.Lock()
	failed := d.failed
	d.mu.Unlock()
	if failed != nil {
		http.Error(w, "alertdriver: "+failed.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, d.status())
}

func (d *driver) serveRelease(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	d.relOnce.Do(func() { close(d.release) })
	writeJSON(w, d.status())
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}

// fastClock is a work.Clock that runs speed times faster than real time
// from the moment it is made: ages and timestamps grow speed times faster,
// and AfterFunc waits d/speed of real time.
type fastClock struct {
	base  time.Time
	speed float64
}

func newFastClock(speed float64) work.Clock {
	if speed == 1 {
		return work.SystemClock
	}
	return fastClock{base: time.Now(), speed: speed}
}

func (c fastClock) Now() time.Time {
	return c.base.Add(time.Duration(float64(time.Since(c.base)) * c.speed))
}

func (c fastClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(time.Duration(float64(d)/c.speed), f).Stop
}

// newInstanceID returns a random UUID (version 4) naming this process.
func newInstanceID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
