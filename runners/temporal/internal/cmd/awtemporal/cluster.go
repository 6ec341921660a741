package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentwork/agentwork/runners/harness"
	"github.com/agentwork/agentwork/runners/temporal/testserver"
)

// cluster is a Temporal dev server with worker and coordinator processes
// on 127.0.0.1, every process's output in dir (the server's in
// temporal-server.log, written by stop).
type cluster struct {
	self, dir       string
	hostPort, queue string
	jobs            string             // the fake batch service's URL, for the workers' batch target
	durable         bool               // the server keeps its state in a database file (else in memory)
	server          *testserver.Server // nil until startServer

	harness.Procs // the processes, their output in dir

	mu      sync.Mutex
	started map[string]string   // work id -> the worker that said it started it
	starts  map[string]int      // work id -> the attempts said started
	polled  map[string][]string // job work id -> the workers of its polls, in order
	cond    *sync.Cond
}

type proc = harness.Proc

func newCluster(self, dir string) *cluster {
	c := &cluster{self: self, dir: dir, Procs: harness.Procs{Dir: dir}, queue: "agentwork",
		started: map[string]string{}, starts: map[string]int{}, polled: map[string][]string{}}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// startServer starts the dev server (testserver) on a free port and
// waits until it is ready; after killServer, it starts it again on the
// same port (and database). With durable set, the server keeps its state
// in a database file under dir/temporal, so that a restart finds every
// workflow again.
func (c *cluster) startServer() error {
	if c.server != nil {
		return c.server.Restart()
	}
	var srv *testserver.Server
	var err error
	if c.durable {
		srv, err = testserver.StartIn(filepath.Join(c.dir, "temporal"))
	} else {
		srv, err = testserver.Start()
	}
	if err != nil {
		return err
	}
	c.server, c.hostPort = srv, srv.HostPort
	return nil
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

// stop ends every process (SIGKILL), waits for each and writes the dev
// server's output to temporal-server.log.
func (c *cluster) stop() {
	c.StopAll()
	if c.server != nil {
		c.server.Stop()
		_ = os.WriteFile(filepath.Join(c.dir, "temporal-server.log"), []byte(c.server.Logs()), 0o644)
	}
}

func nopLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
