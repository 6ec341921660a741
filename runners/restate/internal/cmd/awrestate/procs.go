package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/agentwork/agentwork/runners/harness"
	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// The deployment's settings, the same in every process: the retry target
// may run twice, a running attempt looks for a cancel every 100 ms, and
// the trust options the environment gives (trust.go).
func options(ingress string, obs observe.Observer, log *slog.Logger) []restate.Option {
	return append([]restate.Option{restate.WithIngress(ingress), restate.WithRetryable("retry"), restate.WithMaxAttempts(2),
		restate.WithOptions(work.WithObserver(obs)), restate.WithLogger(log.Handler()), restate.WithRPCTimeout(time.Minute)}, trustOptions()...)
}

// observer is the process's agentwork telemetry Observer: its spans in
// path ("" keeps none), its log lines to log, its metrics in memory.
func observer(path string, log *slog.Logger) (observe.Observer, error) {
	tp, err := harness.TracerProvider(path)
	if err != nil {
		return nil, err
	}
	return telemetry.New(telemetry.WithTracerProvider(tp), telemetry.WithLogger(log))
}

func serviceMain(args []string) int {
	fs := flag.NewFlagSet("service", flag.ExitOnError)
	ingress := fs.String("ingress", "", "Restate's ingress URL")
	admin := fs.String("admin", "", "Restate's admin URL")
	name := fs.String("name", "service", "this process's name")
	spans := fs.String("spans", "", "span file")
	registry := fs.Bool("registry", false, "serve the registry objects (and no target)")
	listen := fs.String("listen", "", "the loopback address to listen on (default: a free port)")
	advertise := fs.String("advertise", "", "the deployment URL to register (default: http://<listen address>)")
	maxRunning := fs.Int("max-running", 0, "attempts per target at once (0: the default)")
	_ = fs.Parse(args)
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("process", *name)
	obs, err := observer(*spans, log)
	if err != nil {
		log.Error("observer", "err", err)
		return 1
	}
	opts := append(options(*ingress, obs, log), restate.WithAdmin(*admin), restate.WithOptions(work.WithMaxRunning(*maxRunning)))
	if *listen != "" {
		opts = append(opts, restate.WithListenAddress(*listen))
	}
	if *advertise != "" {
		opts = append(opts, restate.WithAdvertisedURL(*advertise))
	}
	var children map[string]restate.Child
	if *registry {
		opts = append(opts, restate.WithRegistry())
	} else {
		children = targets(*name, log)
	}
	w, err := restate.NewWorker(children, opts...)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		err = w.Start(ctx)
		cancel()
	}
	if err != nil {
		log.Error("start", "err", err)
		return 1
	}
	fmt.Printf("ready %s %s\n", *name, w.URL())
	log.Info("service ready", "url", w.URL())
	// Runs until killed, or until stdin closes.
	_, _ = io.Copy(io.Discard, os.Stdin)
	w.Stop()
	return 0
}

func coordinatorMain(args []string) int {
	fs := flag.NewFlagSet("coordinator", flag.ExitOnError)
	ingress := fs.String("ingress", "", "Restate's ingress URL")
	owner := fs.String("owner", "coordinator", "owner id")
	spans := fs.String("spans", "", "span file")
	brk := fs.String("break", "", "a deliberately broken build for the chaos checks (harness.Break*)")
	bound := fs.Duration("model-bound", 40*time.Second, "each model-facing call's bound (the caller's context)")
	rpc := fs.Duration("rpc-timeout", time.Minute, "the Engine's RPC timeout")
	_ = fs.Parse(args)
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("owner", *owner)
	obs, err := observer(*spans, log)
	if err != nil {
		log.Error("observer", "err", err)
		return 1
	}
	opts := append(options(*ingress, obs, log), restate.WithRPCTimeout(*rpc))
	if *brk == harness.BreakNoBound {
		opts = append(opts, restate.WithRPCTimeout(10*time.Minute))
	}
	e := restate.New(opts...)
	defer e.Close(context.Background())
	o := work.NewOwner(*owner)
	return harness.ServeModel(log, e, o, map[string]observe.Kind{"slow": work.KindAgent, "gated": work.KindFunction, "deaf": work.KindAgent}, *bound, *brk, func(f []string) (any, error) { return command(e, o, f) })
}

// statusReply is a status as the model sees it, with the application's
// failure class beside it (the model's JSON has none).
type statusReply struct {
	Status work.Status `json:"status"`
	Class  string      `json:"class,omitempty"`
	Result string      `json:"result,omitempty"`
}

func command(e *work.Engine, o work.Owner, f []string) (any, error) {
	arg := func(i int) string { return harness.Arg(f, i) }
	ctx := context.Background()
	input := arg(2) // start and held: the rest of the line
	if arg(3) != "" {
		input += " " + arg(3)
	}
	switch f[0] {
	case "start":
		kind := work.KindFunction
		if arg(1) == "slow" || arg(1) == "deaf" {
			kind = work.KindAgent
		}
		ref, err := e.Start(ctx, work.Spec{Owner: o, Target: work.Target{Label: arg(1), Kind: kind},
			Input: input, Run: func(context.Context) (string, error) { return "", nil }})
		return map[string]string{"work": ref.ID}, err
	case "held": // held LABEL INPUT: a Work that needs approval
		ref, err := e.Start(ctx, work.Spec{Owner: o, Target: work.Target{Label: arg(1), Kind: work.KindFunction},
			Input: input, NeedsApproval: true, Run: func(context.Context) (string, error) { return "", nil }})
		return map[string]string{"work": ref.ID}, err
	case "asker": // asker INPUT: a Work that reports updates and asks a question
		ref, err := e.Start(ctx, work.Spec{Owner: o, Target: work.Target{Label: "asker", Kind: work.KindFunction},
			Input: arg(1), Updates: &work.UpdatePolicy{}, Run: func(context.Context) (string, error) { return "", nil }})
		return map[string]string{"work": ref.ID}, err
	case "answer": // answer ID CALL MESSAGE
		return e.Answer(ctx, o, arg(1), arg(2), arg(3))
	case "updates": // updates ID: its updates' keys in order, and the question's
		us, err := e.Updates(ctx, o, arg(1), 0)
		keys := make([]string, 0, len(us))
		q := ""
		for _, u := range us {
			keys = append(keys, u.Key)
			if u.Question {
				q = u.Key
			}
		}
		return map[string]any{"keys": keys, "question": q}, err
	case "detach":
		return e.Detach(ctx, o, arg(1))
	case "pending":
		return e.Pending(ctx, o)
	case "approve":
		return map[string]bool{"approved": true}, e.Approve(ctx, o, arg(1))
	case "status":
		st, err := e.Status(ctx, o, arg(1))
		return statusReply{Status: st, Class: st.Class}, err
	case "result":
		st, res, err := e.Result(ctx, o, arg(1), work.MaxResultWait)
		return statusReply{Status: st, Class: st.Class, Result: res}, err
	case "cancel":
		return e.Cancel(ctx, o, arg(1))
	case "send":
		return e.Send(ctx, o, arg(1), arg(2), arg(3))
	case "list":
		return e.List(ctx, o)
	}
	return nil, driver.Detail(work.ErrInvalidSpec, "unknown command")
}
