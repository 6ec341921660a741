package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/client"
)

// demoMain: a Temporal dev server, two workers and a coordinator on
// 127.0.0.1; one worker is killed while it runs children; prints what
// survived. No keys, no model, no network beyond 127.0.0.1.
// The dev server is testserver's (its Binary: AGENTWORK_TEMPORAL_CLI,
// else built into the repository's .cache).
func demoMain(args []string) int {
	fs := flag.NewFlagSet("demo", flag.ExitOnError)
	_ = fs.Parse(args)
	if err := demo(); err != nil {
		fmt.Fprintln(os.Stderr, "demo-temporal:", err)
		return 1
	}
	return 0
}

func demo() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "awtemporal-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cl := newCluster(self, dir)
	defer cl.stop()
	say := func(format string, a ...any) { fmt.Printf(format+"\n", a...) }
	say("Starting a Temporal dev server on 127.0.0.1 (in memory, no UI)...")
	if err := cl.startServer(); err != nil {
		return err
	}
	say("  frontend at %s", cl.hostPort)
	workers := map[string]*proc{}
	for _, name := range []string{"worker-a", "worker-b"} {
		p, err := cl.startWorker(name)
		if err != nil {
			return err
		}
		workers[name] = p
	}
	say("Started two worker processes (worker-a, worker-b) and a coordinator (owner \"demo\").")
	co, err := cl.startCoordinator("coordinator", "demo")
	if err != nil {
		return err
	}
	retryDir := filepath.Join(dir, "retry")
	if err := os.Mkdir(retryDir, 0o755); err != nil {
		return err
	}
	type item struct{ what, label, input, id, worker string }
	items := []*item{
		{what: "an agent child (not retryable)", label: "slow", input: "0"},
		{what: "a retryable function child", label: "retry", input: retryDir},
		{what: "an agent child waiting for guidance", label: "slow", input: "1"},
	}
	launch := func(it *item) error {
		if it.id, err = co.Start(it.label, it.input); err != nil {
			return err
		}
		if it.worker, err = cl.waitStarted(it.id, "", time.Minute); err != nil {
			return err
		}
		say("  started %s: %s, running on %s", it.what, it.id[:8], it.worker)
		return nil
	}
	for _, it := range items[:2] {
		if err := launch(it); err != nil {
			return err
		}
	}
	victim := items[0].worker
	say("Killing %s (SIGKILL) while it runs children...", victim)
	workers[victim].Kill()
	if err := launch(items[2]); err != nil {
		return err
	}
	if err := co.Do(nil, "send", items[2].id, "call-1", "please wrap up"); err != nil {
		return err
	}
	say("  sent guidance to %s through the coordinator (Temporal carries it to its worker)", items[2].id[:8])
	tc, err := client.Dial(client.Options{HostPort: cl.hostPort, Namespace: namespace, DataConverter: dataConverter(), Logger: slogAdapter{nopLogger()}})
	if err != nil {
		return err
	}
	defer tc.Close()
	say("")
	say("What survived (read back through the coordinator):")
	for _, it := range items {
		// Children still running on the live worker that would run on
		// forever are cancelled (cooperatively, through the heartbeat).
		if it.worker != victim && it.input != "1" {
			if err := co.Do(nil, "cancel", it.id); err != nil {
				return err
			}
		}
		r, err := co.Settled(it.id, 90*time.Second)
		if err != nil {
			return err
		}
		state := r.Status.State
		if state == "failed" {
			// The class is not part of the model-facing status; the
			// operator reads it from the Work's workflow result.
			var o struct{ Class string }
			if tc.GetWorkflow(context.Background(), it.id, "").Get(context.Background(), &o) == nil && o.Class != "" {
				state += " (" + o.Class + ")"
			}
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
	say("A child whose worker died is not replayed (its tools may have had side effects): it")
	say("fails with class worker_lost. A child declared retryable runs again on a live worker.")
	return nil
}
