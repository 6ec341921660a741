package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"syscall"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"google.golang.org/grpc"

	"github.com/agentwork/agentwork/runners/harness"
	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/runners/temporal/internal/testcodec"
	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// The deployment's settings, the same in every process.
const (
	namespace = "default"
	heartbeat = 3 * time.Second
)

func options(queue string, obs observe.Observer) []temporal.Option {
	return []temporal.Option{temporal.WithTaskQueue(queue), temporal.WithHeartbeatTimeout(heartbeat),
		temporal.WithRetryable("retry"), temporal.WithMaxAttempts(2), temporal.WithOptions(work.WithObserver(obs)),
		temporal.WithDataConverter(dataConverter())}
}

// dataConverter is the data converter of every client of the harness and
// of the runner's Engines and Workers: the test codec's (AES-GCM,
// internal/testcodec) when its key is in the environment
// (testcodec.KeyEnv: the package's tests put it there, so every process
// they start runs under it), else the SDK's default.
func dataConverter() converter.DataConverter {
	if dc, ok := testcodec.FromEnv(); ok {
		return dc
	}
	return converter.GetDefaultDataConverter()
}

// dial connects to Temporal with the SDK's OpenTelemetry interceptor,
// its spans recorded in path ("" records none), and returns the agentwork
// telemetry Observer of the process: its spans go to the same file, its
// log lines to log (metrics stay in memory).
func dial(hostPort, path string, log *slog.Logger, ops opsFlags) (client.Client, observe.Observer, func(), error) {
	tp, err := harness.TracerProvider(path)
	if err != nil {
		return nil, nil, nil, err
	}
	mp, metrics, err := ops.meter()
	if err != nil {
		return nil, nil, nil, err
	}
	tobs, err := telemetry.New(telemetry.WithTracerProvider(tp), telemetry.WithLogger(log),
		telemetry.WithMeterProvider(mp), telemetry.WithSnapshotTimeout(ops.snapshot))
	if err != nil {
		return nil, nil, nil, err
	}
	obs, stop, err := ops.serve(tobs, metrics)
	if err != nil {
		return nil, nil, nil, err
	}
	c, err := dialTraced(hostPort, tp, path != "")
	return c, obs, stop, err
}

// dieOnStart: the coordinator kills itself (SIGKILL) as it is about to
// start a Work's workflow, after the Work's admission (the chaos test's
// coordinator fault).
var dieOnStart bool

func dialTraced(hostPort string, tp *sdktrace.TracerProvider, traced bool) (client.Client, error) {
	opts := client.Options{HostPort: hostPort, Namespace: namespace, DataConverter: dataConverter(),
		Logger: slogAdapter{slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}}
	if dieOnStart {
		opts.ConnectionOptions.DialOptions = []grpc.DialOption{grpc.WithChainUnaryInterceptor(
			func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, o ...grpc.CallOption) error {
				if r, ok := req.(*workflowservice.StartWorkflowExecutionRequest); ok && r.GetWorkflowType().GetName() == temporal.WorkWorkflowName {
					_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
					select {}
				}
				return invoker(ctx, method, req, reply, cc, o...)
			})}
	}
	if traced {
		tracing, err := opentelemetry.NewTracingInterceptor(opentelemetry.TracerOptions{Tracer: tp.Tracer("awtemporal")})
		if err != nil {
			return nil, err
		}
		opts.Interceptors = []interceptor.ClientInterceptor{tracing}
	}
	return client.Dial(opts)
}

// slogAdapter is the SDK's logger on slog (warnings and errors only).
type slogAdapter struct{ l *slog.Logger }

func (a slogAdapter) Debug(msg string, kv ...any) {}
func (a slogAdapter) Info(msg string, kv ...any)  {}
func (a slogAdapter) Warn(msg string, kv ...any)  { a.l.Warn(msg, kv...) }
func (a slogAdapter) Error(msg string, kv ...any) { a.l.Error(msg, kv...) }

// The targets' canaries: content that may reach the Work's own history
// (its input, result and guidance) and nothing else.
const (
	CanaryInput    = "CANARY-INPUT-5e1d"
	CanaryOutput   = "CANARY-OUTPUT-5e1d"
	CanaryFailure  = "CANARY-FAILURE-5e1d"
	CanaryGuidance = "CANARY-GUIDANCE-5e1d"
)

// Digest is how a slow child reports the guidance it took (harness.Digest).
func Digest(msgs []string) string { return harness.Digest(msgs) }

// targets are a worker process's children: harness.Children, echo (the
// scale run's child) and, with jobs, batch; name is the process's.
func targets(name, jobs string, log *slog.Logger) map[string]temporal.Child {
	t := map[string]temporal.Child{"echo": echoChild}
	for label, c := range harness.Children(name, harness.Canaries{Input: CanaryInput, Output: CanaryOutput, Failure: CanaryFailure}, log) {
		t[label] = temporal.Child{Kind: c.Kind, Run: c.Run}
	}
	if jobs != "" {
		// batch: a job at the fake batch service (jobs.go).
		t["batch"] = temporal.Child{Kind: work.KindFunction, Job: batchJob(jobs, name, log)}
	}
	return t
}

func workerMain(args []string) int {
	fs := flag.NewFlagSet("worker", flag.ExitOnError)
	hostPort := fs.String("hostport", "127.0.0.1:7233", "Temporal frontend")
	queue := fs.String("queue", "agentwork", "task queue")
	name := fs.String("name", "worker", "this worker's name")
	spans := fs.String("spans", "", "span file")
	maxRunning := fs.Int("max-running", 0, "attempts per target at once (0: the default)")
	var ops opsFlags
	ops.register(fs)
	jobs := fs.String("jobs", "", "the fake batch service's URL (the batch target)")
	bare := fs.Bool("bare", false, "also run the scale run's bare Temporal workflow and activity (scale.go)")
	brk := fs.String("break", "", "a deliberately broken build for the chaos checks: rerun (each attempt runs its child twice)")
	_ = fs.Parse(args)
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("worker", *name)
	c, obs, stopOps, err := dial(*hostPort, *spans, log, ops)
	if err != nil {
		log.Error("dial", "err", err)
		return 1
	}
	defer stopOps()
	children := targets(*name, *jobs, log)
	if *brk == breakRerun {
		children = rerun(children)
	}
	w, err := temporal.NewWorker(c, children, append(options(*queue, obs), temporal.WithOptions(work.WithMaxRunning(*maxRunning)))...)
	if err == nil {
		err = w.Start()
	}
	if err != nil {
		log.Error("start", "err", err)
		return 1
	}
	stopBare := func() {}
	if *bare {
		if stopBare, err = startBare(c, *queue); err != nil {
			log.Error("start bare", "err", err)
			w.Stop()
			return 1
		}
	}
	fmt.Printf("ready %s\n", *name)
	log.Info("worker ready")
	// Runs until killed, or until stdin closes.
	_, _ = io.Copy(io.Discard, os.Stdin)
	stopBare()
	w.Stop()
	c.Close()
	return 0
}

func coordinatorMain(args []string) int {
	fs := flag.NewFlagSet("coordinator", flag.ExitOnError)
	hostPort := fs.String("hostport", "127.0.0.1:7233", "Temporal frontend")
	queue := fs.String("queue", "agentwork", "task queue")
	owner := fs.String("owner", "coordinator", "owner id")
	spans := fs.String("spans", "", "span file")
	deployment := fs.Bool("deployment", false, "export the deployment's gauges (work.WithDeploymentGauges)")
	interval := fs.Duration("snapshot-interval", 0, "how long the deployment view is reused (0: the default)")
	brk := fs.String("break", "", "a deliberately broken build for the chaos checks (harness.Break*)")
	bound := fs.Duration("model-bound", 20*time.Second, "each model-facing call's bound (the caller's context)")
	dieBeforeStart := fs.Bool("die-before-start", false, "SIGKILL this process as it is about to start a Work's workflow (after the admission)")
	grace := fs.Duration("admission-grace", 0, "temporal.WithAdmissionGrace (0: the default)")
	maxOutstanding := fs.Int("max-outstanding", 0, "the owner's outstanding limit (0: the default)")
	var ops opsFlags
	ops.register(fs)
	_ = fs.Parse(args)
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("owner", *owner)
	dieOnStart = *dieBeforeStart
	c, obs, stopOps, err := dial(*hostPort, *spans, log, ops)
	if err != nil {
		log.Error("dial", "err", err)
		return 1
	}
	defer stopOps()
	defer c.Close()
	opts := append(options(*queue, obs), temporal.WithNamespace(namespace), temporal.WithOptions(work.WithSnapshotInterval(*interval)),
		temporal.WithAdmissionGrace(*grace), temporal.WithOptions(work.WithMaxOutstanding(*maxOutstanding)))
	if *deployment {
		opts = append(opts, temporal.WithOptions(work.WithDeploymentGauges()))
	}
	if *brk == harness.BreakNoBound {
		opts = append(opts, temporal.WithRPCTimeout(10*time.Minute))
	}
	e := temporal.New(c, opts...)
	defer e.Close(context.Background())
	o := work.NewOwner(*owner)
	return harness.ServeModel(log, e, o, modelLabels, *bound, *brk, func(f []string) (any, error) { return command(e, o, f) })
}

// statusReply is a status as the model sees it, with the application's
// failure class beside it (the model's JSON has none).
type statusReply struct {
	Status work.Status `json:"status"`
	Class  string      `json:"class,omitempty"`
	Result string      `json:"result"`
}

// updatesReply is what the driver reads of a Work's updates: their keys
// in order, and which is a question (never their values).
func updatesReply(us []work.Update) map[string]any {
	keys := make([]string, 0, len(us))
	q := ""
	for _, u := range us {
		keys = append(keys, u.Key)
		if u.Question {
			q = u.Key
		}
	}
	return map[string]any{"keys": keys, "question": q}
}

// modelLabels are the children the coordinator's model can launch.
var modelLabels = map[string]observe.Kind{"slow": work.KindAgent, "gated": work.KindFunction, "deaf": work.KindAgent}

// breakRerun is the worker's broken build: every attempt runs its child
// twice (the second run's output is the result), as a worker that tries
// again on its own would.
const breakRerun = "rerun"

func rerun(children map[string]temporal.Child) map[string]temporal.Child {
	out := map[string]temporal.Child{}
	for label, c := range children {
		if run := c.Run; run != nil {
			c.Run = func(ctx context.Context, in string) (string, error) {
				_, _ = run(ctx, in)
				return run(ctx, in)
			}
		}
		out[label] = c
	}
	return out
}

func command(e *work.Engine, o work.Owner, f []string) (any, error) {
	arg := func(i int) string { return harness.Arg(f, i) }
	switch f[0] {
	case "job": // job INPUT: a Work of the batch job target
		ref, err := e.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "batch", Kind: work.KindFunction},
			Input: arg(1), Job: &work.Job{Backoff: jobBackoff, Submit: noSubmit, Await: noAwait}})
		return map[string]string{"work": ref.ID}, err
	case "held": // held LABEL INPUT: a Work that needs approval
		ref, err := e.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: arg(1), Kind: work.KindFunction},
			Input: arg(2), NeedsApproval: true, Run: func(context.Context) (string, error) { return "", nil }})
		return map[string]string{"work": ref.ID}, err
	case "asker": // asker INPUT: a Work that reports updates and asks a question
		ref, err := e.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "asker", Kind: work.KindFunction},
			Input: arg(1), Updates: &work.UpdatePolicy{}, Run: func(context.Context) (string, error) { return "", nil }})
		return map[string]string{"work": ref.ID}, err
	case "answer": // answer ID CALL MESSAGE
		return e.Answer(context.Background(), o, arg(1), arg(2), arg(3))
	case "updates": // updates ID: the count of its updates, and whether the last is a question
		us, err := e.Updates(context.Background(), o, arg(1), 0)
		return updatesReply(us), err
	case "detach":
		return e.Detach(context.Background(), o, arg(1))
	case "pending":
		return e.Pending(context.Background(), o)
	case "approve":
		return map[string]bool{"approved": true}, e.Approve(context.Background(), o, arg(1))
	case "start":
		kind := work.KindFunction
		if arg(1) == "slow" || arg(1) == "deaf" {
			kind = work.KindAgent
		}
		input := arg(2)
		if arg(3) != "" {
			input += " " + arg(3)
		}
		ref, err := e.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: arg(1), Kind: kind},
			Input: input, Run: func(context.Context) (string, error) { return "", nil }})
		return map[string]string{"work": ref.ID}, err
	case "status":
		st, err := e.Status(context.Background(), o, arg(1))
		return statusReply{Status: st, Class: st.Class}, err
	case "result":
		st, res, err := e.Result(context.Background(), o, arg(1), work.MaxResultWait)
		return statusReply{Status: st, Class: st.Class, Result: res}, err
	case "cancel":
		return e.Cancel(context.Background(), o, arg(1))
	case "send":
		return e.Send(context.Background(), o, arg(1), arg(2), arg(3))
	case "list":
		return e.List(context.Background(), o)
	}
	return nil, driver.Detail(work.ErrInvalidSpec, "unknown command")
}

// The coordinator's declaration of a job needs Submit and Await
// (work.Job.Validate); on Temporal the Worker's Job is what runs.
func noSubmit(context.Context, string, string) ([]byte, error) { return nil, work.ErrInvalidSpec }

func noAwait(context.Context, []byte) (work.Poll, error) { return work.Poll{}, work.ErrInvalidSpec }
