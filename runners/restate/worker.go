package restate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	restate "github.com/restatedev/sdk-go"
	"github.com/restatedev/sdk-go/server"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// Child is one target a Worker runs: its kind and its run, called with
// the Work's input, or, with Job set (Run nil), an external job submitted
// with the Work's input and polled with backoff (see the package doc).
type Child struct {
	Kind observe.Kind
	Run  func(ctx context.Context, input string) (string, error)
	Job  *work.Job
}

// Worker is a Restate SDK deployment serving the Work workflows of its
// targets ("<ns>.Work.<label>"), and, WithRegistry, the owners' and the
// Works' objects. Start listens on a loopback port and registers the
// deployment with the admin API; Stop closes it (attempts in progress are
// cut off: Restate retries them, and the recovery rule applies). A Worker
// is safe for concurrent use.
type Worker struct {
	cfg     config
	targets map[string]Child
	in      *ingress
	rep     *reporter
	slots   map[string]chan struct{} // per target: its running attempts and submits
	polls   map[string]chan struct{} // per job target: its polls in progress
	running *driver.Slots            // the attempts in progress (Snapshot); nil for a Worker not made by NewWorker
	watched driver.Watching          // the Observer's, from Start to Stop

	// The attempts a retried step may take back (rejoin.go), and the
	// watches of those adrift.
	held    driver.Held[*heldAttempt]
	adrifts driver.Adrift

	mu   sync.Mutex
	srv  *http.Server
	done chan struct{}
	url  string
}

// NewWorker returns a Worker for targets (by label). It needs WithIngress
// and WithAdmin (without either it fails with work.ErrUnavailable, as the
// Engine's calls do without an ingress), and fails with work.ErrInvalidLimit or
// work.ErrInvalidBudget for an invalid limit or budget option, and with
// work.ErrInvalidSpec for no target with no registry, or for an invalid
// target: a label that is empty or
// has a '/' or a space, both or neither of Run and Job, a Run without a
// kind, or a Job that is not a function target or fails
// work.Job.Validate.
func NewWorker(targets map[string]Child, opts ...Option) (*Worker, error) {
	cfg := newConfig(opts)
	if cfg.Err != nil {
		return nil, fmt.Errorf("restate: %w", cfg.Err)
	}
	if cfg.ingress == "" || cfg.admin == "" {
		return nil, fmt.Errorf("restate: a Worker needs WithIngress and WithAdmin: %w", work.ErrUnavailable)
	}
	if len(targets) == 0 && !cfg.registry {
		return nil, fmt.Errorf("restate: a Worker with no target and no registry serves nothing: %w", work.ErrInvalidSpec)
	}
	if len(cfg.identity) > 0 {
		// The SDK parses the keys when it makes its handler.
		if _, err := server.NewRestate().WithLogger(slog.DiscardHandler, true).WithIdentityV1(cfg.identity...).Handler(); err != nil {
			return nil, fmt.Errorf("restate: WithIdentityKeys: %w", err)
		}
	}
	w := &Worker{cfg: cfg, targets: map[string]Child{}, in: newIngress(cfg.ingress, cfg.ns, cfg.RPCTimeout, cfg.hc),
		rep: newReporter(cfg.Limits.Observer), slots: map[string]chan struct{}{}, polls: map[string]chan struct{}{}}
	for label, t := range targets {
		if err := driver.ValidTarget(label, t.Kind, t.Run != nil, t.Job); err != nil {
			return nil, fmt.Errorf("restate: %w", err)
		}
		if strings.ContainsAny(label, "/ ") { // a part of its service's name
			return nil, fmt.Errorf("restate: target %q: a label without '/' or spaces is required: %w", label, work.ErrInvalidSpec)
		}
		w.targets[label] = t
		w.slots[label] = make(chan struct{}, cfg.Limits.MaxRunning)
		if t.Job != nil {
			w.polls[label] = make(chan struct{}, driver.ResolveJob(*t.Job).MaxPolls)
		}
	}
	w.running = driver.NewSlots(slices.Collect(maps.Keys(w.targets)), cfg.Limits.MaxRunning)
	return w, nil
}

// own returns w's running slots: nil for a Worker not made by NewWorker
// (zero or nil).
func (w *Worker) own() *driver.Slots {
	if w == nil {
		return nil
	}
	return w.running
}

// Start serves the deployment on a free loopback port and registers it
// (bounded by ctx). A Worker not made by NewWorker (zero or nil) answers
// work.ErrNotInitialized. When the admin API does not answer (after a few
// tries), Start stops the server again and returns work.ErrUnavailable
// (its cause reachable), or ctx's error when ctx ends first.
func (w *Worker) Start(ctx context.Context) error {
	if w.own() == nil {
		return work.ErrNotInitialized
	}
	rs := server.NewRestate().WithLogger(w.cfg.logger, true).WithIdentityV1(w.cfg.identity...)
	if w.cfg.registry {
		d := w.cfg.Limits.MaxDuration
		rs = rs.Bind(registry{ns: w.cfg.ns, maxDur: d}.definition()).Bind(control{ns: w.cfg.ns, rep: w.rep, maxDur: d, ring: w.cfg.ring, log: slog.New(w.cfg.logger)}.definition()).
			Bind(approvals{ns: w.cfg.ns, maxDur: d}.definition())
	}
	for _, l := range slices.Sorted(maps.Keys(w.targets)) {
		rs = rs.Bind(w.workflow(l))
	}
	h, err := rs.Handler()
	if err != nil {
		return err
	}
	addr := w.cfg.listen
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: h, Protocols: &protocols, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	url := w.cfg.advertise
	if url == "" {
		url = "http://" + l.Addr().String()
	}
	w.mu.Lock()
	w.srv, w.done, w.url = srv, done, url
	w.mu.Unlock()
	if err := register(ctx, w.cfg.admin, url, w.cfg.hc); err != nil {
		w.Stop()
		return err
	}
	w.watched.Start(w.cfg.Limits.Observer, w)
	return nil
}

// URL returns the deployment's URL ("" before Start).
func (w *Worker) URL() string {
	if w.own() == nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.url
}

// Stop closes the deployment's server, cutting off the attempts in
// progress, and waits for it. It is idempotent, and does nothing on a
// Worker not made by NewWorker.
func (w *Worker) Stop() {
	if w.own() == nil {
		return
	}
	w.adrifts.Stop()
	defer w.adrifts.Wait()
	w.watched.Stop()
	w.mu.Lock()
	srv, done := w.srv, w.done
	w.srv = nil
	w.mu.Unlock()
	if srv == nil {
		return
	}
	_ = srv.Close()
	<-done
}

// workflow is the Work workflow of target label: its run handler runs the
// child in one journaled step and settles the Work; the output handler
// is where its control object's cancel resolves the stop promise, and
// where an approval's answer resolves the approval promise.
func (w *Worker) workflow(label string) restate.ServiceDefinition {
	return restate.NewWorkflow(workName(w.cfg.ns, label), timeouts(w.cfg.Limits.MaxDuration)...).
		Handler(hRun, restate.NewWorkflowHandler(func(ctx restate.WorkflowContext, in workInput) (restate.Void, error) {
			if in.Approval != nil {
				if run, err := w.awaitApproval(ctx, in); err != nil || !run {
					return restate.Void{}, err
				}
			}
			if in.Job != nil {
				return restate.Void{}, w.runJob(ctx, in)
			}
			// The attempt runs beside a wait on the stop promise, which the
			// control object resolves on a cancel: the running child's
			// context is cancelled as the promise's completion arrives.
			pushed := make(chan struct{})
			fut := restate.RunAsync(ctx, func(rc restate.RunContext) (attemptResult, error) {
				return w.attempt(rc, in, pushed)
			}, restate.WithName("child"),
				// A step whose attempt another process holds (its claim
				// answers Busy, rejoin.go) is run again soon, through the
				// balancer, until it reaches that process.
				restate.WithInitialRetryInterval(100*time.Millisecond), restate.WithMaxRetryInterval(time.Second),
				restate.WithRetryIntervalFactor(2))
			first, err := restate.WaitFirst(ctx, fut, restate.Promise[bool](ctx, stopPromise))
			if err != nil {
				return restate.Void{}, err
			}
			if first != fut {
				close(pushed)
			}
			res, err := fut.Result()
			if err != nil {
				return restate.Void{}, err
			}
			if res.Out.Class == "" && !res.Out.NotRun {
				res.Out.Output = res.Output
			}
			if !res.Out.NotRun {
				_, err = restate.Object[restate.Void](ctx, w.cfg.ns+"."+controlService, in.ID, hFinish).Request(res.Out)
			}
			return restate.Void{}, err
		})).
		Handler(hStop, restate.NewWorkflowSharedHandler(func(ctx restate.WorkflowSharedContext, _ restate.Void) (restate.Void, error) {
			_ = restate.Promise[bool](ctx, stopPromise).Resolve(true) // already resolved: stopping anyway
			return restate.Void{}, nil
		})).
		Handler(hApproval, restate.NewWorkflowSharedHandler(func(ctx restate.WorkflowSharedContext, answer string) (restate.Void, error) {
			_ = restate.Promise[string](ctx, approvalPromise).Resolve(answer) // answered once
			return restate.Void{}, nil
		}))
}

// contentError logs, with the SDK's log lines (WithLogger), that Work
// id's stored content could not be opened or sealed (ErrUndecryptable: no
// content in the message).
func (w *Worker) contentError(id string, err error) {
	slog.New(w.cfg.logger).Error("restate: a Work's content cannot be decrypted or sealed", "work", id, "error", err.Error())
}

// attemptResult is the journaled step's result: the outcome and, for a
// completed child, its output.
type attemptResult struct {
	Out    runOutcome
	Output string `json:",omitempty"`
}

// register registers the deployment at url with the admin API at admin
// (with hc, WithHTTPClient), forcing over an earlier registration of the
// same url.
func register(ctx context.Context, admin, url string, hc *http.Client) error {
	c := newIngress(admin, "", 30*time.Second, hc)
	var last error
	for try := 1; try <= 10; try++ {
		last = c.call(ctx, "deployments", "", map[string]any{"uri": url, "force": true}, nil)
		var st *errStatus
		if last == nil || errors.As(last, &st) && st.Status/100 == 4 || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(try) * 100 * time.Millisecond):
		}
	}
	if last != nil {
		return fmt.Errorf("restate: registering the deployment %s: %w", url, fromIngress(ctx, last))
	}
	return nil
}
