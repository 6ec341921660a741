package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/agentwork/agentwork/runners/harness"
)

// cluster is a Temporal dev server with worker and coordinator processes
// on 127.0.0.1, every process's output in dir.
type cluster struct {
	self, temporal, dir string
	hostPort, queue     string
	jobs                string // the fake batch service's URL, for the workers' batch target
	db                  string // the server's database file ("": in memory)
	port                int    // the server's port, kept across restarts
	server              *proc  // the dev server running now

	harness.Procs // the processes, their output in dir

	mu      sync.Mutex
	started map[string]string   // work id -> the worker that said it started it
	starts  map[string]int      // work id -> the attempts said started
	polled  map[string][]string // job work id -> the workers of its polls, in order
	cond    *sync.Cond
}

type proc = harness.Proc

func newCluster(self, temporalBin, dir string) *cluster {
	c := &cluster{self: self, temporal: temporalBin, dir: dir, Procs: harness.Procs{Dir: dir}, queue: "agentwork",
		started: map[string]string{}, starts: map[string]int{}, polled: map[string][]string{}}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// startServer starts the dev server on a free port (the same port
// again when it ran before) and waits until its frontend answers. With
// db set, the server keeps its state in that file (--db-filename), so
// that a restart on the same file finds every workflow again.
func (c *cluster) startServer(ctx context.Context) error {
	if c.port == 0 {
		port, err := harness.FreePort()
		if err != nil {
			return err
		}
		c.port = port
		c.hostPort = "127.0.0.1:" + strconv.Itoa(port)
	}
	args := []string{"server", "start-dev", "--ip", "127.0.0.1", "--port", strconv.Itoa(c.port),
		"--headless", "--log-level", "warn", "--search-attribute", "AgentworkOwner=Keyword",
		// One partition per task queue: each queue of the deployment has few pollers.
		"--dynamic-config-value", "matching.numTaskqueueReadPartitions=1",
		"--dynamic-config-value", "matching.numTaskqueueWritePartitions=1"}
	if c.db != "" {
		args = append(args, "--db-filename", c.db)
	}
	p, err := c.Spawn("temporal-server", nil, c.temporal, args...)
	if err != nil {
		return err
	}
	c.server = p
	for {
		cl, err := client.Dial(client.Options{HostPort: c.hostPort, Namespace: namespace, Logger: slogAdapter{nopLogger()}})
		if err == nil {
			_, err = cl.CheckHealth(ctx, &client.CheckHealthRequest{})
			cl.Close()
			if err == nil {
				return nil
			}
		}
		select {
		case <-p.Done:
			return errors.New("the Temporal dev server exited (see " + filepath.Join(c.dir, "temporal-server.log") + ")")
		case <-ctx.Done():
			return fmt.Errorf("the Temporal dev server did not answer: %w", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// killServer SIGKILLs the dev server and waits until it exited.
func (c *cluster) killServer() {
	if c.server != nil {
		c.server.Kill()
	}
}

// startWorker starts a worker process, with extra flags, and waits until
// it polls.
func (c *cluster) startWorker(name string, extra ...string) (*proc, error) {
	ready := make(chan struct{})
	var once sync.Once
	p, err := c.Spawn(name, func(line string) {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "ready":
			once.Do(func() { close(ready) })
		case len(f) == 3 && f[0] == "started":
			c.mu.Lock()
			c.started[f[1]] = f[2]
			c.starts[f[1]]++
			c.cond.Broadcast()
			c.mu.Unlock()
		case len(f) == 3 && f[0] == "polled":
			c.mu.Lock()
			c.polled[f[1]] = append(c.polled[f[1]], f[2])
			c.cond.Broadcast()
			c.mu.Unlock()
		}
	}, c.self, append([]string{"worker", "-hostport", c.hostPort, "-queue", c.queue, "-name", name,
		"-spans", filepath.Join(c.dir, name+".spans"), "-jobs", c.jobs}, extra...)...)
	if err != nil {
		return nil, err
	}
	select {
	case <-ready:
		return p, nil
	case <-p.Done:
		return nil, fmt.Errorf("worker %s exited (see its log)", name)
	case <-time.After(2 * time.Minute):
		p.Kill()
		return nil, fmt.Errorf("worker %s did not start", name)
	}
}

// waitStarted waits until a worker says it started an attempt of id
// (after the attempts already seen, when since is that worker).
func (c *cluster) waitStarted(id, since string, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	t := time.AfterFunc(timeout, func() { c.mu.Lock(); c.cond.Broadcast(); c.mu.Unlock() })
	defer t.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if w, ok := c.started[id]; ok && w != since {
			return w, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no worker started Work %s within %s", id, timeout)
		}
		c.cond.Wait()
	}
}

// waitPolled waits until the polls of job id satisfy cond (the workers
// that made them, in order) and returns them.
func (c *cluster) waitPolled(id string, cond func([]string) bool, timeout time.Duration) ([]string, error) {
	deadline := time.Now().Add(timeout)
	t := time.AfterFunc(timeout, func() { c.mu.Lock(); c.cond.Broadcast(); c.mu.Unlock() })
	defer t.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if ws := c.polled[id]; cond(ws) {
			return append([]string(nil), ws...), nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("job %s: polls %v within %s", id, c.polled[id], timeout)
		}
		c.cond.Wait()
	}
}

// coordinator is a coordinator process driven line by line.
type coordinator = harness.Coordinator

// startCoordinator starts a coordinator process for owner, with extra
// flags, and waits until it is ready.
func (c *cluster) startCoordinator(name, owner string, extra ...string) (*coordinator, error) {
	return c.StartCoordinator(name, c.self, append([]string{"coordinator", "-hostport", c.hostPort,
		"-queue", c.queue, "-owner", owner, "-spans", filepath.Join(c.dir, name+".spans")}, extra...)...)
}

// stop ends every process (SIGKILL) and waits for each.
func (c *cluster) stop() { c.StopAll() }

func nopLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
