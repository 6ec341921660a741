package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// demoMain: a Restate server, a registry process, two service processes
// behind a balancer and a coordinator on 127.0.0.1; one service process
// is killed while it runs children; prints what survived. No keys, no
// model, no network beyond 127.0.0.1.
func demoMain(args []string) int {
	fs := flag.NewFlagSet("demo", flag.ExitOnError)
	keep := fs.Bool("keep", false, "keep the processes' logs (their directory is printed)")
	_ = fs.Parse(args)
	if err := demo(*keep); err != nil {
		fmt.Fprintln(os.Stderr, "demo-restate:", err)
		return 1
	}
	return 0
}

func demo(keep bool) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "awrestate-demo-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Printf("The processes' logs are kept in %s.\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	cl := newCluster(self, dir)
	defer cl.stop()
	say := func(format string, a ...any) { fmt.Printf(format+"\n", a...) }
	say("Starting a Restate server on 127.0.0.1 (a temporary base directory)...")
	if err := cl.start(); err != nil {
		return err
	}
	say("  ingress at %s, admin at %s; the registry objects served by their own process", cl.srv.Ingress, cl.srv.Admin)
	services := map[string]*proc{}
	for _, name := range []string{"service-a", "service-b"} {
		p, err := cl.startWorker(name)
		if err != nil {
			return err
		}
		services[name] = p
	}
	say("Started two service processes (service-a, service-b) behind a balancer at %s,", cl.lb.URL)
	say("registered as the targets' one deployment, and a coordinator (owner \"demo\").")
	co, err := cl.startCoordinator("coordinator", "demo")
	if err != nil {
		return err
	}
	retryDir := filepath.Join(dir, "retry")
	if err := os.Mkdir(retryDir, 0o755); err != nil {
		return err
	}
	type item struct{ what, label, input, id, worker string }
	var items []*item
	launch := func(it *item) error {
		if it.id, err = co.Start(it.label, it.input); err != nil {
			return err
		}
		if it.worker, err = cl.waitStarted(it.id, 1, time.Minute); err != nil {
			return err
		}
		items = append(items, it)
		say("  started %s: %s, running on %s", it.what, it.id[:8], it.worker)
		return nil
	}
	if err := launch(&item{what: "a retryable function child", label: "retry", input: retryDir}); err != nil {
		return err
	}
	// The balancer takes turns: agent children until one runs beside the
	// retryable one.
	victim := items[0].worker
	for items[len(items)-1].worker != victim || len(items) == 1 {
		if len(items) > 4 {
			return fmt.Errorf("no agent child ran on %s", victim)
		}
		if err := launch(&item{what: "an agent child (not retryable)", label: "slow", input: "0"}); err != nil {
			return err
		}
	}
	say("Killing %s (SIGKILL) while it runs children...", victim)
	cl.killWorker(services[victim])
	guided := &item{what: "an agent child waiting for guidance", label: "slow", input: "1"}
	if err := launch(guided); err != nil {
		return err
	}
	if err := co.Do(nil, "send", guided.id, "call-1", "please wrap up"); err != nil {
		return err
	}
	say("  sent guidance to %s through the coordinator (Restate carries it to its service process)", guided.id[:8])
	say("")
	say("What survived (read back through the coordinator):")
	for _, it := range items {
		// A child still running on the live process that would run on
		// forever is cancelled.
		if it.worker != victim && it.input == "0" {
			say("  (cancelling %s, which runs until cancelled, on %s)", it.id[:8], it.worker)
			if err := co.Do(nil, "cancel", it.id); err != nil {
				return err
			}
		}
		r, err := co.Settled(it.id, 90*time.Second)
		if err != nil {
			return err
		}
		state := r.Status.State
		if state == "failed" && r.Class != "" {
			state += " (" + r.Class + ")"
		}
		line := fmt.Sprintf("  %s %-36s %-20s attempt %d", it.id[:8], it.what, state, r.Status.Attempt)
		if it.worker == victim {
			line += ", first attempt on the killed " + victim
		}
		if r.Result != "" {
			line += fmt.Sprintf("\n           result: %q", r.Result)
		}
		say("%s", line)
	}
	say("")
	say("A child whose process died is not replayed (its tools may have had side effects): it")
	say("fails with class worker_lost. A child declared retryable runs again on a live process.")
	return nil
}
